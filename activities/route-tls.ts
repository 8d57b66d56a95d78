// A Route's external-domain TLS (serving pkg/reconciler/route/route.go `externalDomainTLS`): with config-network's
// external-domain-tls on (and not disabled by the Route's annotation), one Knative Certificate per external domain —
// or a wildcard Certificate of the Route's domain that covers it — whose Secret goes into the KIngress's spec.tls once
// the Certificate is Ready; CertificateProvisioned and the URLs' schemes follow the Certificates, and Certificates of
// domains the Route no longer serves are deleted.
import { isCertificateFailed, isCertificateReady, certificateReadyReason, type Certificate } from '../api/certificate.js';
import type { NetworkConfig } from '../api/config/network.js';
import { lookupDomainForLabels, type DomainConfig } from '../api/config/domain.js';
import { Resources } from '../api/kinds.js';
import { Labels } from '../api/labels.js';
import {
  ExternalDomainTLSNotEnabledMessage,
  markCertificateNotOwned,
  markCertificateNotReady,
  markCertificateProvisionFailed,
  markCertificateReady,
  markHTTPDowngrade,
  markTLSNotEnabled,
  TLSNotEnabledForClusterLocalMessage,
  type RouteStatus,
} from '../api/lifecycle/route.js';
import { NetworkingLabels, type IngressTLS } from '../api/networking.js';
import type { Route } from '../api/serving.js';
import {
  certificateClassFor,
  externalDomainTLSEnabled,
  makeIngressTLS,
  makeRouteCertificates,
  orphanedCertificates,
  wildcardCertificateMatches,
} from '../resources/certificate.js';
import { DefaultClusterDomain } from '../resources/ingress.js';
import type { RecordLater } from './apply.js';
import { reconcileCertificate, type CertificateContext } from './knative-certificate.js';

export interface RouteTLS {
  /** The KIngress's spec.tls: one entry per Ready Certificate. */
  tls: IngressTLS[];
  /** The scheme each host's URL gets (a host a Certificate covers is https, or http again when downgraded). */
  schemes: Map<string, 'http' | 'https'>;
  /** A Certificate of the wanted name that the Route does not control (nothing is programmed, as upstream). */
  notOwned?: string;
  /** A Certificate that could not be created or updated (the pass fails after writing the status). */
  failed?: string;
}

export interface RouteTLSInput {
  route: Route;
  status: RouteStatus;
  /** Each traffic name's external hosts (`''` the default target; none for a cluster-local Route). */
  external: Readonly<Record<string, readonly string[]>>;
  net: NetworkConfig;
  dom: DomainConfig;
  now: string;
  record: RecordLater;
}

export async function reconcileRouteTLS(ctx: CertificateContext, input: RouteTLSInput): Promise<RouteTLS> {
  const { kube } = ctx;
  const { route, status, net, now, record } = input;
  const out: RouteTLS = { tls: [], schemes: new Map() };
  if (!externalDomainTLSEnabled(route.metadata.annotations, net.externalDomainTls)) {
    markTLSNotEnabled(status, ExternalDomainTLSNotEnabledMessage, now);
    return out;
  }
  const ns = route.metadata.namespace ?? '';
  const domainTags: Record<string, string> = {};
  // Cluster-local domains (under the cluster domain, as hakn's default domain is) get no certificate (upstream
  // `domains.IsClusterLocal`).
  for (const [name, hosts] of Object.entries(input.external))
    for (const host of hosts) if (!host.endsWith(DefaultClusterDomain)) domainTags[host] = name;
  const routeDomain = lookupDomainForLabels(input.dom, route.metadata.labels);
  const desired = makeRouteCertificates(route, domainTags, certificateClassFor(route.metadata.annotations, net.certificateClass), routeDomain);
  // A Route with only cluster-local hosts asks for no certificate.
  if (desired.length === 0) markTLSNotEnabled(status, TLSNotEnabledForClusterLocalMessage, now);
  const [wildcards, own] = await Promise.all([
    desired.length > 0
      ? kube.list<Certificate>(Resources.Certificate, ns, { labelSelector: `${NetworkingLabels.wildcardDomain}=${routeDomain}` })
      : undefined,
    kube.list<Certificate>(Resources.Certificate, ns, { labelSelector: `${Labels.route}=${route.metadata.name ?? ''}` }),
  ]);
  const found = await Promise.all(
    desired.map(async (want) => {
      const wildcard = wildcards?.items.find((c) => wildcardCertificateMatches(want.spec.dnsNames, c));
      return wildcard ? ({ outcome: 'ok', cert: wildcard } as const) : reconcileCertificate(ctx, route, want, record);
    }),
  );
  for (const [i, want] of desired.entries()) {
    const res = found[i]!;
    if (res.outcome === 'notOwned') {
      markCertificateNotOwned(status, want.metadata.name ?? '', now);
      return { ...out, notOwned: want.metadata.name ?? '' };
    }
    if (res.outcome === 'failed') {
      markCertificateProvisionFailed(status, want.metadata.name ?? '', '', now);
      return { ...out, failed: res.message };
    }
    const cert = res.cert;
    const dnsNames = [...new Set(cert.spec.dnsNames)].sort();
    for (const host of dnsNames) out.schemes.set(host, 'https');
    if (isCertificateReady(cert)) {
      markCertificateReady(status, now);
      out.tls.push(makeIngressTLS(cert, dnsNames));
      continue;
    }
    if (isCertificateFailed(cert)) markCertificateProvisionFailed(status, cert.metadata.name ?? '', certificateReadyReason(cert), now);
    else markCertificateNotReady(status, cert.metadata.name ?? '', certificateReadyReason(cert), now);
    if (net.httpProtocol === 'enabled') {
      // Plain HTTP is served meanwhile (upstream does not apply the Route's own http-protocol annotation here).
      for (const host of dnsNames) out.schemes.set(host, 'http');
      markHTTPDowngrade(status, cert.metadata.name ?? '', now);
    }
  }
  for (const orphan of orphanedCertificates(own.items, new Set(Object.keys(domainTags)))) {
    const where = `${orphan.metadata.namespace ?? ''}/${orphan.metadata.name ?? ''}`;
    try {
      await kube.delete(Resources.Certificate, orphan.metadata.namespace ?? '', orphan.metadata.name ?? '');
      record(orphan, 'Normal', 'Deleted', `Deleted orphaned Knative Certificate ${where}`);
    } catch (err) {
      record(orphan, 'Normal', 'DeleteFailed', `Failed to delete orphaned Knative Certificate ${where}: ${(err as Error).message}`);
    }
  }
  return out;
}

/** `url` with its scheme set to what `schemes` says of its host (unchanged when it says nothing). */
export function withScheme(url: string, schemes: ReadonlyMap<string, 'http' | 'https'>): string {
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/:]+)(.*)$/i.exec(url);
  const scheme = m ? schemes.get(m[2]!) : undefined;
  return m && scheme ? `${scheme}://${m[2]}${m[3]}` : url;
}
