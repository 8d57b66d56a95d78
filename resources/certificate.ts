// The Knative Certificates a Route and a DomainMapping ask for with config-network's external-domain-tls on
// (serving pkg/reconciler/route/resources/certificate.go, names.Certificate, pkg/reconciler/domainmapping/resources/
// certificate.go, the route reconciler's `externalDomainTLS`), and the KIngress TLS entry a ready one gives.
import { DisableExternalDomainTLSAnnotations, CertificateTypeExternalDomain, DomainMappingUIDLabel, type Certificate } from '../api/certificate.js';
import { Labels } from '../api/labels.js';
import type { KubeObject } from '../api/meta.js';
import { NETWORKING_INTERNAL_API_VERSION, NetworkingAnnotations, NetworkingLabels, type IngressTLS } from '../api/networking.js';
import { adler32 } from './adler32.js';
import { ExcludedIngressAnnotations } from './ingress.js';
import { childName } from './names.js';
import { controllerRef } from './owner.js';
import { byteOrder } from './traffic.js';

/** First present key wins (knative.dev/pkg `kmap.KeyPriority.Value`). */
function firstPresent(map: Readonly<Record<string, string>> | undefined, keys: readonly string[]): string | undefined {
  for (const k of keys) if (map && Object.hasOwn(map, k)) return map[k];
  return undefined;
}

/** Go's `strconv.ParseBool`: undefined for anything it refuses. */
function parseBool(v: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  return undefined;
}

/**
 * Whether an object (Route, DomainMapping) gets certificates (upstream `externalDomainTLSEnabled`): config-network's
 * external-domain-tls is enabled and its `networking.knative.dev/disable-external-domain-tls` annotation (or a
 * deprecated spelling) does not say true. A value ParseBool refuses does not disable it, as upstream.
 */
export function externalDomainTLSEnabled(
  annotations: Readonly<Record<string, string>> | undefined,
  externalDomainTls: 'enabled' | 'disabled',
): boolean {
  if (externalDomainTls !== 'enabled') return false;
  const v = firstPresent(annotations, DisableExternalDomainTLSAnnotations);
  return v === undefined || parseBool(v) !== true;
}

/** The certificate class of a Route: its `certificate.class` (or `certificate-class`) annotation, else config-network's. */
export function certificateClassFor(annotations: Readonly<Record<string, string>> | undefined, configured: string): string {
  const v = firstPresent(annotations, [NetworkingAnnotations.certificateClass, NetworkingAnnotations.certificateClassAlt]);
  return v ? v : configured;
}

/**
 * A Route's certificate name (upstream `certNameFromRouteAndTag`): `route-<uid>`, and for a tag `-<adler32(tag)>`
 * (decimal) appended.
 */
export function routeCertificateName(route: Pick<KubeObject, 'metadata'>, tag: string): string {
  const name = `route-${route.metadata.uid ?? ''}`;
  return tag === '' ? name : `${name}-${adler32(tag)}`;
}

/** A DomainMapping's certificate name: `ChildName(<mapping>, "")`. */
export function domainMappingCertificateName(dm: Pick<KubeObject, 'metadata'>): string {
  return childName(dm.metadata.name ?? '', '');
}

/**
 * One Certificate (upstream `MakeCertificate`): in the owner's namespace, controlled by it, annotated with the class
 * over the owner's annotations (minus those never copied to networking objects), labelled with the owner and the
 * certificate type, for one DNS name; the Secret is named as the Certificate.
 */
export function makeCertificate(
  owner: KubeObject,
  ownerLabelKey: string,
  dnsName: string,
  certName: string,
  certClass: string,
  baseDomain: string,
): Certificate {
  const annotations: Record<string, string> = { [NetworkingAnnotations.certificateClass]: certClass, ...owner.metadata.annotations };
  for (const k of ExcludedIngressAnnotations) delete annotations[k];
  return {
    apiVersion: NETWORKING_INTERNAL_API_VERSION,
    kind: 'Certificate',
    metadata: {
      name: certName,
      namespace: owner.metadata.namespace ?? '',
      ownerReferences: [controllerRef(owner)],
      annotations,
      labels: { [ownerLabelKey]: owner.metadata.name ?? '', [NetworkingLabels.certificateType]: CertificateTypeExternalDomain },
    },
    spec: { dnsNames: [dnsName], domain: baseDomain, secretName: certName },
  };
}

/**
 * A Route's Certificates (upstream `MakeCertificates`): one per external domain, in domain order; `domainTags` maps each
 * domain to its traffic name (`''` for the default target), `domain` is the Route's base domain.
 */
export function makeRouteCertificates(
  route: KubeObject,
  domainTags: Readonly<Record<string, string>>,
  certClass: string,
  domain: string,
): Certificate[] {
  return Object.keys(domainTags)
    .sort(byteOrder)
    .map((dnsName) => makeCertificate(route, Labels.route, dnsName, routeCertificateName(route, domainTags[dnsName]!), certClass, domain));
}

/** A DomainMapping's Certificate: for its name, labelled `serving.knative.dev/domainMappingUID: <name>` as upstream. */
export function makeDomainMappingCertificate(dm: KubeObject, certClass: string): Certificate {
  const name = dm.metadata.name ?? '';
  return makeCertificate(dm, DomainMappingUIDLabel, name, domainMappingCertificateName(dm), certClass, name);
}

/** The KIngress TLS entry of a ready Certificate (upstream `MakeIngressTLS`). */
export function makeIngressTLS(cert: Pick<Certificate, 'metadata' | 'spec'>, hosts: readonly string[]): IngressTLS {
  return { hosts: [...hosts], secretName: cert.spec.secretName, secretNamespace: cert.metadata.namespace ?? '' };
}

/**
 * A wildcard Certificate covering every domain (upstream `wildcardCertMatches`): each domain's parent (all but its
 * first label) is the parent of one of the Certificate's DNS names.
 */
export function wildcardCertificateMatches(domains: readonly string[], cert: Pick<Certificate, 'spec'>): boolean {
  const parent = (d: string): string | undefined => {
    const i = d.indexOf('.');
    return i < 0 ? undefined : d.slice(i + 1);
  };
  const parents = new Set(cert.spec.dnsNames.map(parent).filter((p): p is string => p !== undefined));
  return domains.every((d) => {
    const p = parent(d);
    return p !== undefined && parents.has(p);
  });
}

/** The Route's external-domain Certificates none of whose DNS names is still wanted (upstream `deleteOrphanRouteCerts`). */
export function orphanedCertificates(certs: readonly Certificate[], wantedDomains: ReadonlySet<string>): Certificate[] {
  return certs.filter(
    (c) =>
      c.metadata.labels?.[NetworkingLabels.certificateType] === CertificateTypeExternalDomain && !c.spec.dnsNames.some((d) => wantedDomains.has(d)),
  );
}
