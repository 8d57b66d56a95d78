// The link from an object to its story: the entity workflow that reconciles it, and that workflow in the Temporal UI.
// Steps write it into `status.annotations` with every status write (Knative's duckv1 "additional status fields",
// which kubectl describe shows and Knative's tools ignore) and end Warning Events with it; `kubectl tidal` reads it
// back. Pure.
import { DomainMappingUIDLabel } from './certificate.js';
import { entityWorkflowId, isEntityKind } from './entity.js';
import { Labels } from './labels.js';
import type { KubeObject } from './meta.js';

export const StoryAnnotations = {
  /** The id of the entity workflow that reconciles the object, e.g. `Service/default/nginx`. */
  workflow: 'tidal.dev/workflow',
  /** That workflow in the Temporal UI, when `config-observability`'s `temporal-ui-url` is set. */
  workflowUrl: 'tidal.dev/workflow-url',
} as const;

/** Where an object's story is: the workflow's id, its Temporal namespace, and the UI's base URL ('' when unknown). */
export interface StoryLink {
  workflowId: string;
  temporalNamespace: string;
  uiUrl: string;
}

/**
 * The Temporal UI's page of a workflow's latest run: `<ui>/namespaces/<namespace>/workflows/<id>` (the UI redirects
 * to the newest run of that id); undefined without a UI.
 */
export function workflowUiUrl(link: StoryLink): string | undefined {
  if (link.uiUrl === '') return undefined;
  return `${link.uiUrl}/namespaces/${encodeURIComponent(link.temporalNamespace)}/workflows/${encodeURIComponent(link.workflowId)}`;
}

/** The annotations a status carries for `link`. */
export function storyAnnotations(link: StoryLink): Record<string, string> {
  const url = workflowUiUrl(link);
  return { [StoryAnnotations.workflow]: link.workflowId, ...(url ? { [StoryAnnotations.workflowUrl]: url } : {}) };
}

/**
 * `status` with the link in its `annotations`, other annotations kept; a URL of an earlier setting is dropped when no
 * UI is set now. A status that is not an object is returned as it is.
 */
export function withStoryAnnotations<S>(status: S, link: StoryLink): S {
  if (status === null || typeof status !== 'object' || Array.isArray(status)) return status;
  const { annotations, ...rest } = status as { annotations?: Record<string, string> };
  const kept = Object.fromEntries(Object.entries(annotations ?? {}).filter(([k]) => k !== StoryAnnotations.workflowUrl));
  return { ...rest, annotations: { ...kept, ...storyAnnotations(link) } } as S;
}

/** The tail of a Warning Event's message: where to read what happened. */
export function storySuffix(link: StoryLink): string {
  return ` (story: ${workflowUiUrl(link) ?? `workflow ${link.workflowId}`})`;
}

/** The message of a Warning Event with the link at its end (once: a repeat keeps its aggregation key). */
export function linkedWarning(message: string, link: StoryLink): string {
  const suffix = storySuffix(link);
  return message.endsWith(suffix) ? message : `${message}${suffix}`;
}

/** The link an object carries in its status, if any. */
export function storyLinkOf(obj: { status?: unknown }): { workflowId?: string; url?: string } {
  const annotations = (obj.status as { annotations?: Record<string, string> } | undefined)?.annotations ?? {};
  const workflowId = annotations[StoryAnnotations.workflow];
  const url = annotations[StoryAnnotations.workflowUrl];
  return { ...(workflowId ? { workflowId } : {}), ...(url ? { url } : {}) };
}

/**
 * Labels Knative puts on what a Service, Route or DomainMapping makes, naming the owner whose workflow reconciles it
 * (a DomainMapping's KIngress and Certificate carry its uid and its name).
 */
const ownerLabels: [label: string, kind: 'Service' | 'Route' | 'DomainMapping', named: 'value' | 'self'][] = [
  [Labels.service, 'Service', 'value'],
  [Labels.route, 'Route', 'value'],
  [DomainMappingUIDLabel, 'DomainMapping', 'self'],
];

/**
 * The id of the workflow that reconciles `obj`, as the link names it; worked out from the object when its status has
 * no link yet (written before the link existed): a Revision has its own; what a Service, Route or DomainMapping made
 * (Configuration, Route, KIngress, Certificate) is its owner's, by Knative's labels; anything else its own kind's.
 */
export function storyWorkflowOf(obj: KubeObject & { status?: unknown }): string | undefined {
  const linked = storyLinkOf(obj).workflowId;
  if (linked) return linked;
  const key = { namespace: obj.metadata.namespace ?? 'default', name: obj.metadata.name ?? '' };
  if (obj.kind === 'Revision') return entityWorkflowId('Revision', key);
  const labels = obj.metadata.labels ?? {};
  for (const [label, kind, named] of ownerLabels) {
    const value = labels[label];
    if (!value || kind === obj.kind) continue;
    return entityWorkflowId(kind, { namespace: key.namespace, name: named === 'value' ? value : key.name });
  }
  return isEntityKind(obj.kind) ? entityWorkflowId(obj.kind, key) : undefined;
}
