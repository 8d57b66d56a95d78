// What a DomainMapping makes (knative/serving pkg/reconciler/domainmapping/resources/{ingress,domainclaim}.go) and
// how its `spec.ref` resolves (reconciler.go `resolveRef`, knative.dev/pkg resolver `URIFromKReference`).
// Pure.
import { Annotations } from '../api/labels.js';
import {
  CLUSTER_DOMAIN_CLAIM_API_VERSION,
  ClusterDomain,
  DomainMappingLabels,
  OriginalHostHeader,
  type ClusterDomainClaim,
  type DomainMapping,
  type KReference,
} from '../api/domainmapping.js';
import {
  IngressVisibilityExternalIP,
  NETWORKING_INTERNAL_API_VERSION,
  NetworkingAnnotations,
  ServicePorts,
  type HTTPOption,
  type Ingress,
  type IngressTLS,
} from '../api/networking.js';
import { kingressName } from './names.js';
import { controllerRef } from './owner.js';

/** The claim a DomainMapping creates when autocreate is on: its name, owned by its namespace (no owner reference). */
export function makeDomainClaim(dm: DomainMapping): ClusterDomainClaim {
  return {
    apiVersion: CLUSTER_DOMAIN_CLAIM_API_VERSION,
    kind: 'ClusterDomainClaim',
    metadata: { name: dm.metadata.name ?? '' },
    spec: { namespace: dm.metadata.namespace ?? '' },
  };
}

/** upstream's error when the claim is missing (autocreate off) or belongs to another namespace. */
export function claimNotOwnedMessage(dm: Pick<DomainMapping, 'metadata'>): string {
  return `namespace ${JSON.stringify(dm.metadata.namespace ?? '')} does not own ClusterDomainClaim for ${JSON.stringify(dm.metadata.name ?? '')}`;
}

/** The mapping's ingress class: its `networking.knative.dev/ingress.class` annotation, else config-network's. */
export function domainMappingIngressClass(dm: Pick<DomainMapping, 'metadata'>, configured: string): string {
  const v = dm.metadata.annotations?.[NetworkingAnnotations.ingressClass];
  return v ? v : configured;
}

/** config-network `http-protocol` as the KIngress's httpOption (`disabled`, deprecated, leaves it unset). */
export function domainMappingHTTPOption(httpProtocol: 'enabled' | 'redirected' | 'disabled'): HTTPOption | undefined {
  return httpProtocol === 'enabled' ? 'Enabled' : httpProtocol === 'redirected' ? 'Redirected' : undefined;
}

/** The KIngress TLS entry for `spec.tls` (a secret of the mapping's namespace), when set. */
export function domainMappingTLS(dm: DomainMapping): IngressTLS[] | undefined {
  const secretName = dm.spec.tls?.secretName;
  if (dm.spec.tls === undefined) return undefined;
  return [{ hosts: [dm.metadata.name ?? ''], secretName: secretName ?? '', secretNamespace: dm.metadata.namespace ?? '' }];
}

/**
 * The KIngress of a DomainMapping (upstream `MakeIngress`): named after the mapping, labels = the mapping's ∪ its uid
 * and namespace, annotations = the ingress class ∪ the mapping's (minus last-applied), one ExternalIP rule for the
 * mapping's host whose single path rewrites the authority to the target's host and sends 100 % to the target's
 * Kubernetes Service on port 80 with `K-Original-Host: <the mapping's host>`.
 */
export function makeDomainMappingIngress(
  dm: DomainMapping,
  target: { serviceName: string; host: string },
  ingressClass: string,
  opts: { httpOption?: HTTPOption | undefined; tls?: IngressTLS[] | undefined } = {},
): Ingress {
  const name = dm.metadata.name ?? '';
  const namespace = dm.metadata.namespace ?? '';
  const annotations: Record<string, string> = { [NetworkingAnnotations.ingressClass]: ingressClass, ...dm.metadata.annotations };
  delete annotations[Annotations.lastAppliedConfiguration];
  return {
    apiVersion: NETWORKING_INTERNAL_API_VERSION,
    kind: 'Ingress',
    metadata: {
      name: kingressName(name),
      namespace,
      labels: { ...dm.metadata.labels, [DomainMappingLabels.uid]: dm.metadata.uid ?? '', [DomainMappingLabels.namespace]: namespace },
      annotations,
      ownerReferences: [controllerRef(dm)],
    },
    spec: {
      ...(opts.tls ? { tls: opts.tls } : {}),
      rules: [
        {
          hosts: [name],
          visibility: IngressVisibilityExternalIP,
          http: {
            paths: [
              {
                rewriteHost: target.host,
                splits: [
                  {
                    serviceNamespace: namespace,
                    serviceName: target.serviceName,
                    servicePort: ServicePorts.http,
                    percent: 100,
                    appendHeaders: { [OriginalHostHeader]: name },
                  },
                ],
              },
            ],
          },
        },
      ],
      ...(opts.httpOption ? { httpOption: opts.httpOption } : {}),
    },
  };
}

/** What a reference points at, to read it: its API group, version and kind, and the REST plural. */
export interface RefType {
  group: string;
  version: string;
  kind: string;
  plural: string;
}

/** `apis.KindToResource`: the plural the resolver guesses from a kind (lower case, then `es` after an `s`, else `s`). */
export function kindToPlural(kind: string): string {
  const k = kind.toLowerCase();
  return k.endsWith('s') ? `${k}es` : `${k}s`;
}

/** The type `ref` names, from its apiVersion (`group/version` or core `version`) and kind. */
export function refType(ref: KReference): RefType {
  const apiVersion = ref.apiVersion ?? '';
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  return { group, version, kind: ref.kind ?? '', plural: kindToPlural(ref.kind ?? '') };
}

/** A core/v1 Service: the resolver answers with its cluster DNS name without reading it. */
export function isKubernetesServiceRef(ref: KReference): boolean {
  return (ref.apiVersion ?? '') === 'v1' && ref.kind === 'Service';
}

/** The resolver's URL of a core/v1 Service: `http://<name>.<namespace>.svc.cluster.local`. */
export function kubernetesServiceURL(ref: KReference): string {
  return `http://${ref.name ?? ''}.${ref.namespace ?? ''}.svc.${ClusterDomain}`;
}

/** client-go's NotFound message: `<plural>.<group> "<name>" not found`. */
export function notFoundMessage(t: RefType, namespace: string, name: string): string {
  const resource = t.group === '' ? t.plural : `${t.plural}.${t.group}`;
  return `failed to get object ${namespace}/${name}: ${resource} ${JSON.stringify(name)} not found`;
}

/** The resolver's error for an Addressable without `status.address.url`. */
export function addressNotSetMessage(ref: KReference): string {
  return `address not set for &ObjectReference{Kind:${ref.kind ?? ''},Namespace:${ref.namespace ?? ''},Name:${ref.name ?? ''},UID:,APIVersion:${ref.apiVersion ?? ''},ResourceVersion:,FieldPath:,}`;
}

export type ResolvedTarget = { ok: true; host: string; serviceName: string } | { ok: false; message: string };

/**
 * Checks a resolved URL as upstream's `resolveRef` does: no path, a host `<name>.<namespace>.svc.<cluster domain>`,
 * and that namespace the mapping's. Yields the host to rewrite to and the Kubernetes Service behind it.
 */
export function checkResolvedURL(url: string, dmNamespace: string): ResolvedTarget {
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#]*)([^?#]*)/.exec(url);
  const host = m?.[2] ?? '';
  const path = m?.[3] ?? url;
  if (path.replace(/\/$/, '') !== '') return { ok: false, message: `resolved URI ${JSON.stringify(url)} contains a path` };
  const suffix = `.svc.${ClusterDomain}`;
  const parts = host.endsWith(suffix) ? host.slice(0, -suffix.length).split('.') : [];
  if (parts.length !== 2) return { ok: false, message: `resolved URI ${JSON.stringify(url)} must be of the form {name}.{namespace}${suffix}` };
  if (parts[1] !== dmNamespace) return { ok: false, message: `resolved URI ${JSON.stringify(url)} must be in same namespace as DomainMapping` };
  return { ok: true, host, serviceName: parts[0]! };
}
