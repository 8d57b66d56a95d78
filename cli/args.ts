// `kubectl tidal`'s command line. Pure.
import { storyKindOf, type StoryKind } from './kinds.js';

export type View = 'story' | 'why' | 'auto';

export interface StoryArgs {
  view: View;
  kind: StoryKind;
  name: string;
  namespace?: string;
  kubeconfig?: string;
  context?: string;
  /** How many of the newest passes the story shows. */
  passes: number;
  /** Temporal connection overrides (else the controller's environment variables). */
  temporal: { address?: string; namespace?: string; tlsDir?: string };
}

export const usage = `kubectl tidal — an object's story, from its Temporal workflow history

Usage:
  kubectl tidal [story|why] <kind>/<name> [flags]
  kubectl tidal [story|why] <kind> <name> [flags]

  story   the object's recent passes: when, what triggered each, what each step did, what failed, what comes next
  why     why it is not Ready: the condition, the pass that set it, what it waits for, the next retry or timer
          (the default for an object that is not Ready; story otherwise)

Kinds: ksvc, cfg, rev, route (rt), dm, kingress (king), kcert, or their full names.

Flags:
  -n, --namespace <ns>        the object's namespace (default: the kubeconfig context's)
      --kubeconfig <file>     kubeconfig (default: $KUBECONFIG, ~/.kube/config)
      --context <name>        kubeconfig context
      --passes <n>            how many passes the story shows (default 10)
      --temporal-address <host:port>, --temporal-namespace <ns>, --temporal-tls-dir <dir>
                              the Temporal connection; default the controller's variables TEMPORAL_ADDRESS,
                              TEMPORAL_NAMESPACE, TEMPORAL_TLS_DIR (ca.crt, tls.crt + tls.key, api-key, server-name)
                              and TEMPORAL_TLS
  -h, --help                  this text`;

const valueFlags: Record<string, string> = {
  '-n': 'namespace',
  '--namespace': 'namespace',
  '--kubeconfig': 'kubeconfig',
  '--context': 'context',
  '--passes': 'passes',
  '--temporal-address': 'address',
  '--temporal-namespace': 'temporalNamespace',
  '--temporal-tls-dir': 'tlsDir',
};

/** The parsed command line; 'help' when asked for it; an Error naming what is wrong. */
export function parseArgs(argv: readonly string[]): StoryArgs | 'help' | Error {
  const values: Record<string, string> = {};
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === '-h' || a === '--help') return 'help';
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const key = valueFlags[flag];
    if (key) {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') return new Error(`${flag} needs a value`);
      values[key] = v;
    } else if (a.startsWith('-')) return new Error(`unknown flag ${a}`);
    else words.push(a);
  }
  const view: View = words[0] === 'story' || words[0] === 'why' ? (words.shift() as View) : 'auto';
  if (words.length === 0) return 'help';
  const [first = '', second] = words;
  const [kindName, name] = first.includes('/') ? [first.slice(0, first.indexOf('/')), first.slice(first.indexOf('/') + 1)] : [first, second];
  if (!name || words.length > (first.includes('/') ? 1 : 2)) return new Error(`expected <kind>/<name>, got "${words.join(' ')}"`);
  const kind = storyKindOf(kindName);
  if (kind instanceof Error) return kind;
  const passes = values.passes === undefined ? 10 : Number(values.passes);
  if (!Number.isInteger(passes) || passes < 1) return new Error(`--passes ${values.passes ?? ''}: expected a whole number ≥ 1`);
  return {
    view,
    kind,
    name,
    passes,
    ...(values.namespace ? { namespace: values.namespace } : {}),
    ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context ? { context: values.context } : {}),
    temporal: {
      ...(values.address ? { address: values.address } : {}),
      ...(values.temporalNamespace ? { namespace: values.temporalNamespace } : {}),
      ...(values.tlsDir ? { tlsDir: values.tlsDir } : {}),
    },
  };
}
