// A release as a user meets it: `npm run release -- --snapshot` writes two manifests that the API server accepts with
// one `kubectl apply` each, and `npm run version` names the running controller's version and the Temporal server's.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../../dev/kubectl.js';
import { kubectl, stack } from '../harness/cluster.js';

const run = promisify(execFile);
const out = mkdtempSync(path.join(tmpdir(), 'tidal-release-'));
const pkgVersion = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;

afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('a release', () => {
  it('is two manifests the API server takes with one kubectl apply each, the image by digest', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'dev/release.ts', 'v9.8.7-test', '--snapshot', '--out', out], {
      cwd: repoRoot,
      maxBuffer: 16 << 20,
    });
    const result = JSON.parse(stdout) as { version: string; image: string; commit: string };
    expect(result.version).toBe('v9.8.7-test');
    expect(result.image).toMatch(/^ghcr\.io\/tidal-serving\/controller@sha256:[0-9a-f]{64}$/);
    const index = JSON.parse(readFileSync(path.join(out, 'image', 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
    expect(result.image.endsWith(index.manifests[0]!.digest)).toBe(true);
    // The kubectl plugin, one executable file that runs on bare Node.
    expect((await run(path.join(out, 'kubectl-tidal'), ['--help'])).stdout).toMatch(/^kubectl tidal — /);

    const core = parseAllDocuments(readFileSync(path.join(out, 'tidal-core.yaml'), 'utf8')).map(
      (d) =>
        d.toJSON() as {
          kind: string;
          metadata: { labels: Record<string, string> };
          spec: { template: { spec: { containers: { image: string }[] } } };
        },
    );
    const deployment = core.find((o) => o.kind === 'Deployment');
    expect(deployment?.metadata.labels['app.kubernetes.io/version']).toBe('v9.8.7-test');
    expect(deployment?.spec.template.spec.containers[0]?.image).toBe(result.image);

    for (const f of ['tidal-crds.yaml', 'tidal-core.yaml']) {
      const objs = parseAllDocuments(readFileSync(path.join(out, f), 'utf8')).map((d) => d.toJSON() as { kind: string; metadata: { name: string } });
      // The stack registered the webhook configurations with a loopback url; applied over them, the Service form would
      // leave both set. Under other names they are validated as created.
      for (const o of objs) if (/^(Mutating|Validating)WebhookConfiguration$/.test(o.kind)) o.metadata.name = `release.${o.metadata.name}`;
      const applied = await kubectl(
        ['apply', '--server-side', '--dry-run=server', '--field-manager=release-test', '--force-conflicts', '-f', '-'],
        objs.map((o) => JSON.stringify(o)).join('\n---\n'),
      );
      const lines = applied.trim().split('\n');
      expect(lines, f).toHaveLength(objs.length);
      for (const l of lines) expect(l).toMatch(/ serverside-applied \(server dry run\)$/);
    }
  });

  it('`npm run version` names the running controller, its version, and the Temporal server', async () => {
    const s = stack();
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'dev/version.ts'], {
      cwd: repoRoot,
      env: { ...process.env, TEMPORAL_ADDRESS: s.temporalAddress, KUBECONFIG: s.kubeconfig },
    });
    expect(stdout).toMatch(new RegExp(`^client +${pkgVersion.replace(/\./g, '\\.')} `, 'm'));
    expect(stdout).toMatch(/^controllers +[1-9]\d* polling task queue tidal/m);
    expect(stdout).toMatch(new RegExp(`^  \\S+  ${pkgVersion.replace(/\./g, '\\.')}\\+dev`, 'm'));
    expect(stdout).toMatch(/^temporal +server \d+\.\d+\.\d+/m);
    expect(stdout).toMatch(/^deployment +none in knative-serving/m);
  });

  it('the controller says its version at /version and in tidal_build_info', async () => {
    const s = stack();
    const version = (await (await fetch(`http://127.0.0.1:${s.controllerMetricsPort}/version`)).json()) as { version: string; commit: string };
    expect(version).toMatchObject({ version: pkgVersion, commit: 'dev' });
    const metrics = await (await fetch(`http://127.0.0.1:${s.controllerMetricsPort}/metrics?name=tidal_build_info`)).text();
    expect(metrics).toContain(`tidal_build_info{version="${pkgVersion}",commit="dev",node_version="${process.version}"} 1`);
  });
});
