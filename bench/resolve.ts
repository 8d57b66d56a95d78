// Tag-to-digest resolution latency: 100 resolutions each against a real registry on loopback (Debian's
// docker-registry, TLS), anonymous and with htpasswd credentials from a pull secret.
import path from 'node:path';
import { rmSync } from 'node:fs';
import { makeRegistryResolver } from '../registry/resolver.js';
import type { KubeClient } from '../kube/client.js';
import type { KubeObject } from '../api/meta.js';
import { pushImage } from '../dev/oci-images.js';
import { startRegistry, stopRegistry } from '../dev/registry.js';
import { repoRoot } from '../dev/stack.js';

const runs = Number(process.env.BENCH_RUNS ?? 100);
const dir = path.join(repoRoot, '.tidal', 'bench-registry');

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

async function main(): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  const pub = await startRegistry({ dir: path.join(dir, 'public'), port: 35443, auth: false, tls: true });
  const priv = await startRegistry({ dir: path.join(dir, 'private'), port: 35444, auth: true, tls: true, users: { bench: 'bench-password' } });
  try {
    await pushImage(pub, { repository: 'bench/app', tag: 'v1' });
    await pushImage(priv, { repository: 'bench/app', tag: 'v1', user: 'bench', password: 'bench-password' });
    // The resolver reads pull secrets through the Kubernetes API; here a stub answers with one dockerconfigjson.
    const config = JSON.stringify({ auths: { [priv.host]: { username: 'bench', password: 'bench-password' } } });
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'regcred' },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from(config).toString('base64') },
    };
    const kube = {
      get: (_t: unknown, _ns: string, name: string) => Promise.resolve(name === 'regcred' ? (secret as KubeObject) : undefined),
    } as unknown as KubeClient;
    const resolver = makeRegistryResolver({ kube, extraCAPem: `${pub.caPem ?? ''}\n${priv.caPem ?? ''}` });
    console.log(`\nTidal: tag → digest resolution, ${runs} resolutions each (real docker-registry 2.8 on loopback, TLS, 2 cores)`);
    console.log('case\tp50 ms\tp95 ms\tmax ms');
    for (const [label, image, secrets] of [
      ['anonymous', `${pub.host}/bench/app:v1`, []],
      ['pull secret (Basic)', `${priv.host}/bench/app:v1`, ['regcred']],
    ] as const) {
      const ms: number[] = [];
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now();
        await resolver.resolve(image, {
          namespace: 'default',
          serviceAccountName: undefined,
          imagePullSecrets: [...secrets],
          skipRegistries: [],
          timeoutSeconds: 10,
        });
        ms.push(performance.now() - t0);
      }
      ms.sort((a, b) => a - b);
      console.log(`${label}\t${pct(ms, 50).toFixed(1)}\t${pct(ms, 95).toFixed(1)}\t${ms.at(-1)?.toFixed(1)}`);
    }
    resolver.close();
  } finally {
    await stopRegistry(pub.dir);
    await stopRegistry(priv.dir);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
