// The Service entity workflow (Knative's Service reconciler): the Configuration and the Route named after the Service, reconciled in the
// Service's own pass (ADR 0005) — the Configuration's Revision for its generation and its status (Knative's Configuration reconciler), the Route's
// traffic, placeholder Services and KIngress (Knative's Route reconciler) — then the Service's status. Revisions keep workflows of their own.
import { patched } from '@temporalio/workflow';
import type { ObjectKey } from '../api/meta.js';
import { specOfObservation } from '../api/content-token.js';
import type { ChildOutcome, RevisionGcOutcome, RevisionOutcome, RouteOutcome, StatusOutcome, WrittenVersions } from '../activities/index.js';
import { runEntity, type EntityInput, type EntityState, type PassResult } from './entity.js';
import { combinedStep, step } from './activities.js';
import {
  describeChild,
  describeGc,
  describeRollout,
  describeStatus,
  earliestWake,
  gcWake,
  isSettled,
  relabelRecheck,
  rolloutWake,
} from './summaries.js';
import { collectRevisions } from './revision-gc.js';
import { writtenBefore, writtenFacts } from './written.js';

/** Backoff of a pass that could not program the Route (a foreign object holds a placeholder's name), as upstream's. */
function retryDelay(st: Readonly<EntityState>): number {
  return Math.min(60, 2 ** Number(st.facts.routeRetries ?? '0'));
}

export async function serviceWorkflow(input: EntityInput): Promise<string> {
  const key: ObjectKey = { namespace: input.namespace, name: input.name };
  const id = `${key.namespace}/${key.name}`;
  const programRoute = (written: WrittenVersions) =>
    step(`program Route ${id} (traffic, placeholder Services, Ingress and its VirtualServices, status)`).reconcileRoute(key, {
      reportNotOwned: true,
      written,
    });

  /** What a pass remembers and reports after the Route step. */
  function routeResult(
    st: Readonly<EntityState>,
    route: RouteOutcome | undefined,
    gc: RevisionGcOutcome | undefined,
  ): Pick<PassResult, 'retryInSeconds' | 'wake'> & { facts: Record<string, string> } {
    const failed = route !== undefined && route.outcome !== 'gone' && route.notOwned !== undefined;
    const written = writtenFacts(route);
    // A gradual rollout's next step (ADR 0007) or the next Revision to collect (ADR 0008): a durable timer.
    const wake = earliestWake(rolloutWake(id, route), gcWake(id, gc));
    return failed
      ? { retryInSeconds: retryDelay(st), ...wake, facts: { ...written, routeRetries: String(Number(st.facts.routeRetries ?? '0') + 1) } }
      : { ...relabelRecheck(route, () => patched('relabel-recheck')), ...wake, facts: { ...written, routeRetries: '' } };
  }

  return runEntity(input, async (st): Promise<PassResult> => {
    // Only the status of what the children read changed (a Revision became Ready, a KIngress reports): the children
    // are as the last pass applied them, their status and the Route's traffic are not. A Route held for a
    // bring-your-own Revision and a Configuration whose Revision could not be created take full passes. Should the
    // Service's own spec have moved on meanwhile, the status step leaves it and the pass goes on in full.
    const selfSpec = specOfObservation(st.observed[`Service/${id}`]);
    if (st.statusOnly && st.facts.routeHeld !== 'yes' && st.facts.revisionFailed !== 'yes' && selfSpec !== '-') {
      const written = writtenBefore(st);
      // A scheduled pass may be a Revision falling due (ADR 0008): collect first, not after three other steps.
      const gcFirst = st.trigger === 'scheduled' && st.facts.configurationOwned === 'yes' ? await collectRevisions(key, written) : undefined;
      const configuration = st.facts.configurationOwned === 'yes';
      const routeOwned = st.facts.routeOwned === 'yes';
      let cfg: StatusOutcome | undefined;
      let route: RouteOutcome | undefined;
      let status: StatusOutcome;
      if (patched('status-pass-in-one-step')) {
        // One local activity for the three steps between a Revision turning Ready and the Service Ready: no step
        // boundaries on that path (activities/combined.ts). Histories recorded before replay the three steps.
        const parts = await combinedStep(
          [configuration ? `update Configuration ${id} status` : '', routeOwned ? `program Route ${id}` : '', `update Service ${id} status`]
            .filter(Boolean)
            .join(', '),
        ).reconcileServiceStatus(key, { configuration, route: routeOwned, written, expectSpec: selfSpec });
        ({ configuration: cfg, route, service: status } = parts);
      } else {
        cfg = configuration ? await step(`update Configuration ${id} status`).updateConfigurationStatus(key, undefined, { written }) : undefined;
        route = routeOwned ? await programRoute(written) : undefined;
        status = await step(`update Service ${id} status`).updateServiceStatus(key, selfSpec);
      }
      if (status.outcome === 'gone') return { gone: true, summary: 'Service deleted' };
      if (status.outcome !== 'stale') {
        // Last, off the path to Ready: a Revision the Route just stopped routing to may be collectable now.
        const gc = gcFirst ?? (st.facts.configurationOwned === 'yes' ? await collectRevisions(key, writtenAfter(route, written)) : undefined);
        const parts = [describeStatusPass(cfg, route, status), describeGc(gc)];
        return {
          gone: false,
          statusOnly: true,
          settled: isSettled(status),
          ...routeResult(st, route, gc),
          summary: `children's status changed; ${parts.filter(Boolean).join('; ')}`,
        };
      }
    }
    // One after the other: local steps run in parallel would resolve in completion order, which a replay cannot
    // reproduce (ADR 0004). Upstream's order: the Configuration (and so the Revision) first, then the Route.
    let written = writtenBefore(st);
    let cfg: ChildOutcome;
    let rev: RevisionOutcome | undefined;
    let cfgStatus: StatusOutcome | undefined;
    let routeApply: ChildOutcome | undefined;
    let route: RouteOutcome | undefined;
    let status: StatusOutcome | undefined;
    let settledAfter = '';
    /** The Route and the Service's status as the status-only pass in the same step left them, if it ran. */
    let later: { route: RouteOutcome | undefined; status?: StatusOutcome } | undefined;
    if (patched('full-pass-in-one-step')) {
      // The six steps in one local activity, in the same order (activities/combined.ts): a new Service's Revision
      // is created with no step boundary after its Configuration. Histories recorded before replay the six steps.
      const parts = await combinedStep(
        `apply Configuration ${id}, ensure its Revision, update its status, apply Route ${id}, program it, update Service ${id} status; ` +
          'a Revision it creates is waited for, then the children’s status',
      ).reconcileServiceFull(key, { written });
      ({ configuration: cfg, revision: rev, configurationStatus: cfgStatus, routeApply, route, service: status } = parts);
      if (rev && rev.outcome !== 'gone') written = rev.written ?? written;
      // The Revision it created settled while the step waited: the status-only pass its readiness would have poked
      // ran in the same step (ADR 0012, "Later"). A Service whose spec moved on meanwhile keeps the status written
      // before (the Route as programmed last still counts for what the pass wrote); its own poke brings the next pass.
      if (parts.statusService) {
        const { statusConfiguration: c, statusRoute: r, statusService: sv } = parts;
        const stale = sv.outcome === 'stale';
        settledAfter = stale ? `${describeStatusPass(c, r, undefined)}; Service spec moved on` : describeStatusPass(c, r, sv);
        later = { route: r ?? route, ...(stale ? {} : { status: sv }) };
      }
    } else {
      cfg = await step(`apply Configuration ${id}`).reconcileServiceConfiguration(key);
      if (cfg.outcome === 'applied') {
        rev = await step(`ensure Revision of Configuration ${id}`).reconcileConfigurationRevision(key, { written });
        if (rev.outcome !== 'gone') written = rev.written ?? written;
        const createError = rev.outcome === 'failed' ? rev.message : undefined;
        cfgStatus = await step(`update Configuration ${id} status`).updateConfigurationStatus(key, createError, { written });
      }
      if (cfg.outcome !== 'gone') {
        routeApply = await step(`apply Route ${id}`).reconcileServiceRoute(key);
        // A held Route (bring-your-own Revision not there yet) is not re-applied, but the Route as it stands is still ours.
        route = routeApply.outcome === 'applied' || routeApply.outcome === 'held' ? await programRoute(written) : undefined;
        status = await step(`update Service ${id} status`).updateServiceStatus(key);
      }
    }
    if (cfg.outcome === 'gone' || !routeApply || !status)
      return { gone: true, summary: 'Service deleted; its children go with their ownerReferences' };
    const revisionFailed = rev?.outcome === 'failed';
    const revision = rev && rev.outcome !== 'gone' ? `Revision ${rev.revision} ${rev.outcome}` : '';
    const routeOwned = routeApply.outcome === 'applied' || routeApply.outcome === 'held';
    if (status.outcome === 'gone' || later?.status?.outcome === 'gone') return { gone: true, summary: 'Service deleted' };
    const lastRoute = later ? later.route : route;
    const gc = cfg.outcome === 'applied' ? await collectRevisions(key, writtenAfter(lastRoute, written)) : undefined;
    const uid = cfg.outcome === 'applied' ? cfg.ownerUid : routeApply.outcome === 'applied' ? routeApply.ownerUid : undefined;
    const retry = routeResult(st, lastRoute, gc);
    return {
      gone: false,
      settled: isSettled(later?.status ?? status),
      ...(uid ? { uid } : {}),
      ...retry,
      facts: {
        ...retry.facts,
        ...writtenFacts({ written }, lastRoute),
        routeHeld: routeApply.outcome === 'held' ? 'yes' : '',
        revisionFailed: revisionFailed ? 'yes' : '',
        configurationOwned: cfg.outcome === 'applied' ? 'yes' : '',
        routeOwned: routeOwned ? 'yes' : '',
      },
      summary: [
        describeChild('Configuration', cfg),
        revision,
        cfgStatus ? `Configuration ${describeStatus(cfgStatus)}` : '',
        describeChild('Route', routeApply),
        route ? describeRoute(route) : '',
        describeStatus(status),
        settledAfter ? `new Revision settled: ${settledAfter}` : '',
        describeGc(gc),
      ]
        .filter(Boolean)
        .join('; '),
    };
  });
}

/** What the passes wrote, the Route step's writes included (it carries the versions it was given forward). */
function writtenAfter(route: RouteOutcome | undefined, written: WrittenVersions): WrittenVersions {
  return route !== undefined && route.outcome !== 'gone' && route.written ? route.written : written;
}

/** A status-only pass's parts, as its summary names them (a Service status left out is not named). */
function describeStatusPass(cfg: StatusOutcome | undefined, route: RouteOutcome | undefined, status: StatusOutcome | undefined): string {
  return [cfg ? `Configuration ${describeStatus(cfg)}` : '', route ? describeRoute(route) : '', status ? describeStatus(status) : '']
    .filter(Boolean)
    .join('; ');
}

function describeRoute(r: RouteOutcome): string {
  if (r.outcome === 'gone') return 'Route gone';
  const notOwned = r.notOwned ? `, ${r.notOwned} not owned (retrying)` : '';
  const rollout = describeRollout(r);
  return `Route: ${rollout ? `${rollout}, ` : ''}Ingress ${r.ingress}${notOwned}, ${describeStatus(r)}`;
}
