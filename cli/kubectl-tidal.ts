// `kubectl tidal`: an object's story from its workflow history, in the terminal. kubectl runs any `kubectl-<name>` on
// the PATH as `kubectl <name>`; the release ships this file bundled as `kubectl-tidal` (dev/release.ts).
import { parseArgs, usage, type StoryArgs } from './args.js';
import { storyKindOf } from './kinds.js';
import { connectTemporal, getObject, temporalSettings, type TemporalReader } from './read.js';
import { renderStory, renderWhy, type DependencyStory } from './render.js';
import { dependenciesOf, isReady } from './why.js';
import type { ObjectStory } from './story.js';

/** Passes read of each object the why view says the object waits on. */
const DEPENDENCY_PASSES = 3;

async function dependencyStories(args: StoryArgs, s: ObjectStory, temporal: TemporalReader): Promise<DependencyStory[]> {
  const out: DependencyStory[] = [];
  for (const dependency of dependenciesOf(s.kind, s.obj)) {
    const kind = storyKindOf(dependency.kind);
    if (kind instanceof Error) continue;
    const obj = await getObject({ ...args, namespace: s.obj.metadata.namespace ?? args.namespace }, kind, dependency.name);
    if (!obj) continue;
    const workflow = await temporal.read(obj, DEPENDENCY_PASSES);
    out.push({ dependency, kind: kind.kind, obj, ...(workflow ? { workflow } : {}) });
  }
  return out;
}

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  if (args === 'help') {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  if (args instanceof Error) {
    process.stderr.write(`kubectl tidal: ${args.message}\n\n${usage}\n`);
    return 2;
  }
  const obj = await getObject(args, args.kind, args.name);
  if (!obj) {
    process.stderr.write(`kubectl tidal: ${args.kind.names[0] ?? args.kind.kind} ${args.name} not found\n`);
    return 1;
  }
  const temporal = await connectTemporal(temporalSettings(args));
  try {
    const workflow = await temporal.read(obj, args.passes);
    const story: ObjectStory = { kind: args.kind.kind, obj, ...(workflow ? { workflow } : {}) };
    const view = args.view === 'auto' ? (isReady(obj) ? 'story' : 'why') : args.view;
    const nowMs = Date.now();
    const short = `${args.kind.names[0] ?? ''}/${args.name}`;
    const lines =
      view === 'story'
        ? renderStory(story, { passes: args.passes, nowMs })
        : [...renderWhy(story, await dependencyStories(args, story, temporal), { nowMs }), '', `The whole story: kubectl tidal story ${short}`];
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  } finally {
    await temporal.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`kubectl tidal: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
