// net-istio's part of upstream Knative on a stack without a network (kwok pods): marks every KIngress Ready, at its
// generation, with net-istio's load balancers, the moment it appears or changes. Upstream's Route waits for that before
// it makes its placeholder Services and turns Ready; nothing is programmed, so nothing here is a cost of the control
// plane being measured.
//
//   tsx dev/kingress-stand-in.ts --kubeconfig <file>
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import { KubeClient } from '../kube/client.js';
import { Informer } from '../watcher/informer.js';
import { makeLogger } from '../workers/logger.js';
import { argValue } from './cli-args.js';

/** net-istio's gateways, as its KIngress status names them. */
export const IstioLoadBalancers = {
  public: 'istio-ingressgateway.istio-system.svc.cluster.local',
  private: 'knative-local-gateway.istio-system.svc.cluster.local',
} as const;

interface KIngress extends KubeObject {
  status?: { observedGeneration?: number; conditions?: { type: string; status: string }[] };
}

const readyAt = (o: KIngress) =>
  o.status?.observedGeneration === o.metadata.generation && o.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

function status(o: KIngress) {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const cond = (type: string) => ({ type, status: 'True', lastTransitionTime: now });
  return {
    apiVersion: 'networking.internal.knative.dev/v1alpha1',
    kind: 'Ingress',
    metadata: { name: o.metadata.name, namespace: o.metadata.namespace },
    status: {
      observedGeneration: o.metadata.generation,
      conditions: [cond('LoadBalancerReady'), cond('NetworkConfigured'), cond('Ready')],
      publicLoadBalancer: { ingress: [{ domainInternal: IstioLoadBalancers.public }] },
      privateLoadBalancer: { ingress: [{ domainInternal: IstioLoadBalancers.private }] },
    },
  };
}

async function main(args: string[]): Promise<void> {
  const kubeconfig = argValue(args, 'kubeconfig');
  if (!kubeconfig) throw new Error('--kubeconfig <file>');
  const log = makeLogger('info', 'kingress-stand-in');
  const kube = new KubeClient({ kubeconfig, fieldManager: 'kingress-stand-in' });
  // Keys to mark, a few requests in flight; a key changed again meanwhile is marked once more.
  const queue = new Map<string, KIngress>();
  let inFlight = 0;
  const pump = () => {
    while (inFlight < 8 && queue.size > 0) {
      const [key, o] = queue.entries().next().value as [string, KIngress];
      queue.delete(key);
      inFlight += 1;
      kube
        .apply(Resources.KIngress, status(o) as KubeObject, 'status')
        .catch((err: unknown) => {
          // Gone meanwhile is fine; anything else is tried again with the next change or relist.
          log.debug({ err, key }, 'status not written');
        })
        .finally(() => {
          inFlight -= 1;
          pump();
        });
    }
  };
  const informer = new Informer(
    kube,
    Resources.KIngress,
    {
      relistMs: 30_000,
      maxBackoffMs: 1000,
      onChange: (type, obj) => {
        const o = obj as KIngress;
        const key = `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
        if (type === 'deleted') queue.delete(key);
        else if (!readyAt(o) && !o.metadata.deletionTimestamp) {
          queue.set(key, o);
          pump();
        }
      },
    },
    log,
  );
  informer.start();
  await informer.synced;
  log.info('following KIngresses');
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
