// The leader Lease through Tidal's Kubernetes client: get, create and resourceVersion-preconditioned replace, with
// the API server's 409 (a lost race) turned into LeaseConflict. The client should have a short request timeout: a
// renewal that hangs longer than the renew deadline is worthless.
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { KubeClient } from '../kube/client.js';
import { isConflict } from '../kube/errors.js';
import { LeaseConflict, type LeaseApi, type LeaseObject } from './leader-election.js';

export function kubeLeaseApi(kube: KubeClient, namespace: string, name: string): LeaseApi {
  const conflict = (err: unknown): never => {
    throw isConflict(err) ? new LeaseConflict(String(err)) : err;
  };
  const asKube = (l: LeaseObject) => l as unknown as KubeObject;
  const asLease = (o: KubeObject) => o as unknown as LeaseObject;
  return {
    get: async () => {
      const o = await kube.get(Resources.Lease, namespace, name);
      return o ? asLease(o) : undefined;
    },
    create: (lease) => kube.create(Resources.Lease, asKube(lease)).then(asLease, conflict),
    replace: (lease) => kube.replace(Resources.Lease, asKube(lease)).then(asLease, conflict),
  };
}
