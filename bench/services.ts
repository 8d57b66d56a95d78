// The Service the benchmarks create, and how they create it.
import { Resources } from '../api/kinds.js';
import type { Service } from '../api/serving.js';
import type { KubeClient } from '../kube/client.js';
import { isConflict, KubeApiError } from '../kube/errors.js';
import { sleep } from './measure.js';

/** A Service on a Docker Hub image: the local stack skips resolving those, so no registry is involved. */
export function service(name: string, image = 'nginx:1.27'): Service {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: { template: { spec: { containers: [{ image, ports: [{ containerPort: 80 }] }] } } },
  };
}

/**
 * Creates a Service. A dropped connection (a keep-alive socket the API server closed while the benchmark sat idle)
 * is retried; a 409 on a retry means the first attempt got through.
 */
export async function createService(kube: KubeClient, name: string, image?: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await kube.create(Resources.Service, service(name, image));
      return;
    } catch (err) {
      if (attempt > 1 && isConflict(err)) return;
      if (err instanceof KubeApiError || attempt >= 5) throw err;
      await sleep(100 * attempt);
    }
  }
}
