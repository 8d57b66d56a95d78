// net-istio's part of upstream Knative on a stack without a network (kwok pods): marks every KIngress Ready, at its
// generation, with net-istio's load balancers, the moment it appears or changes. Upstream's Route waits for that before
// it makes its placeholder Services and turns Ready; nothing is programmed, so nothing here is a cost of the control
// plane being measured.
//
//   tsx dev/kingress-stand-in.ts --kubeconfig <file>
import { defaultIstioConfig } from '../api/config/istio.js';
import { Resources } from '../api/kinds.js';
import {
  IngressConditionLoadBalancerReady,
  IngressConditionNetworkConfigured,
  IngressConditionReady,
  isIngressReady,
} from '../api/lifecycle/ingress.js';
import type { KubeObject } from '../api/meta.js';
import type { Ingress } from '../api/networking.js';
import { KubeClient } from '../kube/client.js';
import { Informer } from '../watcher/informer.js';
import { makeLogger } from '../workers/logger.js';
import { argValue } from './cli-args.js';

/** net-istio's gateways, as its KIngress status names them. */
const istio = defaultIstioConfig();

function status(o: Ingress) {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const cond = (type: string) => ({ type, status: 'True', lastTransitionTime: now });
  return {
    apiVersion: 'networking.internal.knative.dev/v1alpha1',
    kind: 'Ingress',
    metadata: { name: o.metadata.name, namespace: o.metadata.namespace },
    status: {
      observedGeneration: o.metadata.generation,
      conditions: [IngressConditionLoadBalancerReady, IngressConditionNetworkConfigured, IngressConditionReady].map(cond),
      publicLoadBalancer: { ingress: [{ domainInternal: istio.ingressGateways[0]!.service }] },
      privateLoadBalancer: { ingress: [{ domainInternal: istio.localGateways[0]!.service }] },
    },
  };
}

async function main(args: string[]): Promise<void> {
  const kubeconfig = argValue(args, 'kubeconfig');
  if (!kubeconfig) throw new Error('--kubeconfig <file>');
  const log = makeLogger('info', 'kingress-stand-in');
  const kube = new KubeClient({ kubeconfig, fieldManager: 'kingress-stand-in' });
  // Keys to mark, a few requests in flight; a key changed again meanwhile is marked once more.
  const queue = new Map<string, Ingress>();
  let inFlight = 0;
  const pump = () => {
    while (inFlight < 8 && queue.size > 0) {
      const [key, o] = queue.entries().next().value as [string, Ingress];
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
        const o = obj as Ingress;
        const key = `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
        if (type === 'deleted') queue.delete(key);
        else if (!isIngressReady(o) && !o.metadata.deletionTimestamp) {
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
