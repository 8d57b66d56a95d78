// Activities of the Service workflow (spec §1): converge the Configuration and the Route named after the Service,
// then write the Service's status from what they report.
import { setServiceDefaults } from '../api/defaults.js';
import { Resources, type ResourceType } from '../api/kinds.js';
import { isControlledBy, type KubeObject, type ObjectKey } from '../api/meta.js';
import type { Configuration, Revision, Route, Service } from '../api/serving.js';
import { makeConfiguration } from '../resources/configuration.js';
import { makeRoute } from '../resources/route.js';
import { computeServiceStatus } from '../resources/service-status.js';
import { nowOf, type ActivityDeps } from './deps.js';
import { containsAll, statusOutcome, writeStatus, type StatusOutcome } from './status.js';

/** What one apply of a child did: small, so the workflow history stays readable. */
export type ChildOutcome =
  | { outcome: 'gone' }
  | { outcome: 'notOwned'; name: string }
  | {
      outcome: 'applied';
      action: 'created' | 'updated' | 'unchanged';
      ownerUid: string;
      ownerGeneration: number;
      name: string;
      generation: number;
      resourceVersion: string;
    };

export function createServiceActivities(deps: ActivityDeps) {
  const { kube, events, config } = deps;

  async function readService(key: ObjectKey): Promise<Service | undefined> {
    const svc = await kube.get<Service>(Resources.Service, key.namespace, key.name);
    if (!svc || svc.metadata.deletionTimestamp) return undefined;
    return setServiceDefaults(svc, config.revisionConfig().defaults);
  }

  /** Applies `desired` (a child named after the Service) unless another object owns the name or nothing would change. */
  async function applyChild<T extends KubeObject>(svc: Service, type: ResourceType, existing: T | undefined, desired: T): Promise<ChildOutcome> {
    const name = desired.metadata.name ?? '';
    if (existing && !isControlledBy(existing, svc.metadata.uid)) return { outcome: 'notOwned', name };
    let applied: T = existing as T;
    let action: 'created' | 'updated' | 'unchanged' = 'unchanged';
    if (!existing || !containsAll(existing, desired)) {
      try {
        applied = await kube.apply(type, desired);
      } catch (err) {
        if (!existing) await events.record(svc, 'Warning', 'CreationFailed', `Failed to create ${type.kind} "${name}": ${String(err)}`);
        throw err;
      }
      action = existing ? 'updated' : 'created';
      if (!existing) await events.record(svc, 'Normal', 'Created', `Created ${type.kind} "${name}"`);
    }
    return {
      outcome: 'applied',
      action,
      ownerUid: svc.metadata.uid ?? '',
      ownerGeneration: svc.metadata.generation ?? 0,
      name,
      generation: applied.metadata.generation ?? 0,
      resourceVersion: applied.metadata.resourceVersion ?? '',
    };
  }

  return {
    /** Creates or clobbers the Configuration named after the Service (spec §1.2). */
    async reconcileServiceConfiguration(key: ObjectKey): Promise<ChildOutcome> {
      const svc = await readService(key);
      if (!svc) return { outcome: 'gone' };
      const existing = await kube.get<Configuration>(Resources.Configuration, key.namespace, key.name);
      return applyChild(svc, Resources.Configuration, existing, makeConfiguration(svc, existing));
    },

    /** Creates or clobbers the Route named after the Service (spec §1.3). */
    async reconcileServiceRoute(key: ObjectKey): Promise<ChildOutcome> {
      const svc = await readService(key);
      if (!svc) return { outcome: 'gone' };
      const existing = await kube.get<Route>(Resources.Route, key.namespace, key.name);
      return applyChild(svc, Resources.Route, existing, makeRoute(svc));
    },

    /** Writes the Service's status from its Configuration and Route (spec §1.4). */
    async updateServiceStatus(key: ObjectKey): Promise<StatusOutcome> {
      const svc = await readService(key);
      if (!svc) return { outcome: 'gone' };
      const [configuration, route] = await Promise.all([
        kube.get<Configuration>(Resources.Configuration, key.namespace, key.name),
        kube.get<Route>(Resources.Route, key.namespace, key.name),
      ]);
      const byo = svc.spec.template.metadata?.name;
      const byoRevision = byo ? await kube.get<Revision>(Resources.Revision, key.namespace, byo) : undefined;
      const status = computeServiceStatus({ service: svc, configuration, route, byoRevision }, nowOf(deps));
      return statusOutcome(await writeStatus(kube, Resources.Service, svc, status), status);
    },
  };
}
