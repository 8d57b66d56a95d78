// Activities of the Service workflow (Knative's Service reconciler): converge the Configuration and the Route named after the Service,
// then write the Service's status from what they report.
import { observationOf, specOfObservation } from '../api/content-token.js';
import { defaultsInForce, setConfigurationDefaults, setRouteDefaults, setServiceDefaults, withDefaultsSnapshot } from '../api/defaults.js';
import type { DefaultsConfig } from '../api/config/types.js';
import { Resources, type ResourceType } from '../api/kinds.js';
import { serviceConditionSet, ServiceConditionConfigurationsReady, ServiceConditionRoutesReady } from '../api/lifecycle/service.js';
import { isControlledBy, type KubeObject, type ObjectKey } from '../api/meta.js';
import type { Configuration, Revision, Route, Service } from '../api/serving.js';
import { makeConfiguration } from '../resources/configuration.js';
import { makeRoute } from '../resources/route.js';
import { isRevisionNameTaken } from '../resources/revision-lookup.js';
import { computeServiceStatus } from '../resources/service-status.js';
import { nowOf, type ActivityDeps } from './deps.js';
import { applyReportingFailures, ownedWhole, type ApplyOptions } from './apply.js';
import { statusOutcome, writeStatus, type StatusOutcome } from './status.js';

/** What one apply of a child did: small, so the workflow history stays readable. */
export type ChildOutcome =
  | { outcome: 'gone' }
  | { outcome: 'notOwned'; name: string }
  /** Not applied this pass (a bring-your-own Revision name the Configuration has not created yet). */
  | { outcome: 'held'; name: string; reason: string }
  | {
      outcome: 'applied';
      action: 'created' | 'updated' | 'unchanged';
      ownerUid: string;
      ownerGeneration: number;
      name: string;
      generation: number;
      resourceVersion: string;
    };

/**
 * A Service's children as the steps beside its status step wrote them, or are about to write them (the Route's status,
 * activities/combined.ts); absent: not handed.
 */
export interface WrittenChildren {
  configuration?: Configuration | undefined;
  route?: Route | undefined;
}

/**
 * A Service's Route is wholly its own (upstream's routeSemanticEquals): spec, defaulted, labels and annotations as
 * desired, so a `tag` someone added to the one traffic target, or a label, is removed.
 */
const routeOwned = ownedWhole<Route>(setRouteDefaults);

export function createServiceActivities(deps: ActivityDeps) {
  const { kube, events, config } = deps;

  /**
   * The Service (as read: `raw`) with Knative's defaults filled in where it lacks them — none when the admission
   * webhook stored them; a Service that bypassed the webhook gets the values in force when Tidal first saw it,
   * frozen on its Configuration (`tidal.dev/defaults`, api/defaults.ts) — so a config-defaults change rolls no
   * Revision. Undefined when it is gone or going.
   */
  function withDefaults(
    svc: Service | undefined,
    configuration: Configuration | undefined,
  ): { svc: Service; defaults: DefaultsConfig; raw: Service } | undefined {
    if (!svc || svc.metadata.deletionTimestamp) return undefined;
    const defaults = defaultsInForce(config.revisionConfig().defaults, svc, [configuration]);
    return { svc: setServiceDefaults(svc, defaults), defaults, raw: svc };
  }

  /**
   * Applies `desired` (a child named after the Service) unless another object owns the name or Tidal last applied
   * exactly this and nobody changed it since (activities/apply.ts). A refused apply is reported on the Service as
   * `condition=False` with the API server's message, and retried.
   */
  async function applyChild<T extends KubeObject>(
    svc: Service,
    type: ResourceType,
    existing: T | undefined,
    desired: T,
    condition: string,
    opts: ApplyOptions<T> = {},
  ): Promise<ChildOutcome> {
    const name = desired.metadata.name ?? '';
    if (existing && !isControlledBy(existing, svc.metadata.uid)) return { outcome: 'notOwned', name };
    const target = { obj: svc, type: Resources.Service, set: serviceConditionSet, condition };
    const { obj: applied, action } = await applyReportingFailures(deps, target, type, existing, desired, nowOf(deps), opts);
    if (action === 'created') await events.record(svc, 'Normal', 'Created', `Created ${type.kind} "${name}"`);
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
    /** Creates or clobbers the Configuration named after the Service (Knative's MakeConfigurationFromExisting). */
    async reconcileServiceConfiguration(key: ObjectKey): Promise<ChildOutcome> {
      const [existing, svc] = await Promise.all([
        kube.get<Configuration>(Resources.Configuration, key.namespace, key.name),
        kube.get<Service>(Resources.Service, key.namespace, key.name),
      ]);
      const read = withDefaults(svc, existing);
      if (!read) return { outcome: 'gone' };
      const desired = withDefaultsSnapshot(makeConfiguration(read.svc, existing), read.defaults);
      // Wholly the Service's (upstream's configSemanticEquals): a field added to the template — which would make a
      // Revision — a label or an annotation someone else put on it is removed. Both sides defaulted alike.
      const owned = ownedWhole<Configuration>((cfg) => setConfigurationDefaults(cfg, read.defaults));
      return applyChild(read.svc, Resources.Configuration, existing, desired, ServiceConditionConfigurationsReady, owned);
    },

    /** Creates or clobbers the Route named after the Service (Knative's MakeRoute). */
    async reconcileServiceRoute(key: ObjectKey): Promise<ChildOutcome> {
      // The Route reads no field config-defaults sets: today's defaults do.
      const svc = withDefaults(await kube.get<Service>(Resources.Service, key.namespace, key.name), undefined)?.svc;
      if (!svc) return { outcome: 'gone' };
      // A bring-your-own Revision name (Knative's Service reconciler): the Route is not reprogrammed until the Configuration has
      // caught up with this template and the named Revision exists, so traffic never names a Revision that is not
      // there. The Configuration's status change pokes this workflow when it has.
      const byo = svc.spec.template.metadata?.name;
      if (byo) {
        const [cfg, rev] = await Promise.all([
          kube.get<Configuration>(Resources.Configuration, key.namespace, key.name),
          kube.get<Revision>(Resources.Revision, key.namespace, byo),
        ]);
        const caughtUp = cfg !== undefined && cfg.status?.observedGeneration === cfg.metadata.generation;
        if (!rev || !caughtUp) return { outcome: 'held', name: key.name, reason: `waiting for Revision "${byo}"` };
        // Step 3: a name taken by a conflicting Revision leaves the Route as it is (the status says RevisionNameTaken).
        if (isRevisionNameTaken(cfg, rev)) return { outcome: 'held', name: key.name, reason: `Revision name "${byo}" is taken` };
      }
      const existing = await kube.get<Route>(Resources.Route, key.namespace, key.name);
      return applyChild(svc, Resources.Route, existing, makeRoute(svc), ServiceConditionRoutesReady, routeOwned);
    },

    /**
     * Writes the Service's status from its Configuration and Route (Knative's Service reconciler). `expectSpec` (a status-only pass): the
     * spec hash the children were applied from; a Service whose spec moved on since is left alone (`stale`), for a full
     * pass to apply first — its status must never report a generation whose children were not applied. `written`: the
     * children as the steps beside this one wrote them or are about to (activities/combined.ts), awaited while the
     * Service is read; a child it does not hold is read once it has settled.
     */
    async updateServiceStatus(key: ObjectKey, expectSpec?: string, written?: Promise<WrittenChildren>): Promise<StatusOutcome> {
      const given = written ?? Promise.resolve<WrittenChildren>({});
      const [configuration, route, raw] = await Promise.all([
        given.then((w) => w.configuration ?? kube.get<Configuration>(Resources.Configuration, key.namespace, key.name)),
        given.then((w) => w.route ?? kube.get<Route>(Resources.Route, key.namespace, key.name)),
        kube.get<Service>(Resources.Service, key.namespace, key.name),
      ]);
      const read = withDefaults(raw, configuration);
      if (!read) return { outcome: 'gone' };
      if (expectSpec !== undefined && specOfObservation(observationOf(read.raw)) !== expectSpec) return { outcome: 'stale' };
      const svc = read.svc;
      const byo = svc.spec.template.metadata?.name;
      const byoRevision = byo ? await kube.get<Revision>(Resources.Revision, key.namespace, byo) : undefined;
      const status = computeServiceStatus({ service: svc, configuration, route, byoRevision }, nowOf(deps));
      return statusOutcome(await writeStatus(kube, Resources.Service, svc, status), status);
    },
  };
}
