// The TLS part of programming a KIngress of class istio (resources/istio/ingress-tls.ts has the rules): reads the
// Secrets spec.tls names and the gateway Service, then applies the Secret copies and the Gateways, and removes the
// Ingress's own Gateways it no longer needs.
import { X509Certificate } from 'node:crypto';
import { Resources, type ResourceType } from '../api/kinds.js';
import { isControlledBy, type KubeObject } from '../api/meta.js';
import type { Ingress } from '../api/networking.js';
import {
  DEFAULT_INGRESS_GATEWAY_SERVICE,
  ingressGatewayName,
  planIngressTLS,
  shouldReconcileHTTPServer,
  shouldReconcileTLS,
  type GatewayService,
  type IngressTLSPlan,
  type OriginSecret,
  secretKey,
} from '../resources/istio/ingress-tls.js';
import { qualifiedGatewayName } from '../resources/istio/names.js';
import { applyIfChanged, ownedWhole, settleAll } from './apply.js';
import type { KubeClient } from '../kube/client.js';

type SecretObject = KubeObject & { type?: string; data?: Record<string, string> };

/** The DNS names of the certificate in a Secret's `tls.crt` (PEM, base64 in `data`), in the certificate's order. */
export function certificateDNSNames(secret: SecretObject): string[] {
  const key = `${secret.metadata.namespace ?? ''}/${secret.metadata.name ?? ''}`;
  const crt = secret.data?.['tls.crt'];
  if (!crt) throw new Error(`failed to decode PEM data for secret ${key}`);
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(Buffer.from(crt, 'base64'));
  } catch (err) {
    throw new Error(`failed to parse certificate for secret ${key}: ${(err as Error).message}`, { cause: err });
  }
  return (cert.subjectAltName ?? '')
    .split(', ')
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice('DNS:'.length));
}

/**
 * The external gateway Services: config-istio's default, `istio-system/istio-ingressgateway`, with the selector the
 * live Service has. Tidal's stacks run no Istio gateway workload, so without the Service its Gateways select what
 * hakn's gateway pods are labelled with.
 */
export async function readGatewayServices(kube: KubeClient): Promise<GatewayService[]> {
  const d = DEFAULT_INGRESS_GATEWAY_SERVICE;
  const live = await kube.get<KubeObject & { spec?: { selector?: Record<string, string> } }>(Resources.KubeService, d.namespace, d.name);
  return [{ namespace: d.namespace, name: d.name, selector: { ...(live?.spec?.selector ?? d.selector) } }];
}

/** What the Ingress's TLS and HTTP options add, read and planned; undefined when the shared Gateways serve it alone. */
export async function readIngressTLS(
  kube: KubeClient,
  ing: Ingress,
  defaultExternalGateways: readonly string[],
): Promise<IngressTLSPlan | undefined> {
  if (!shouldReconcileHTTPServer(ing)) return undefined;
  const entries = shouldReconcileTLS(ing) ? (ing.spec.tls ?? []) : [];
  const keys = [...new Set(entries.map(secretKey))];
  const [services, secrets] = await Promise.all([
    readGatewayServices(kube),
    Promise.all(
      keys.map(async (key) => {
        const [namespace = '', name = ''] = key.split('/');
        const secret = await kube.get<SecretObject>(Resources.Secret, namespace, name);
        if (!secret) throw new Error(`secret "${name}" not found in namespace "${namespace}"`);
        return secret;
      }),
    ),
  ]);
  const origins = new Map<string, OriginSecret>(keys.map((key, i) => [key, { ...secrets[i]!, dnsNames: certificateDNSNames(secrets[i]!) }]));
  return planIngressTLS(ing, origins, services, defaultExternalGateways);
}

/**
 * Applies what `plan` wants (Secret copies, then the Gateways; a Gateway's spec is all Tidal's). Without a plan (TLS and
 * the redirect dropped), deletes the Gateway the Ingress had when its live VirtualService `liveIngressVS` still names
 * it (nothing to read otherwise) and the Ingress controls it.
 */
export async function applyIngressTLS(kube: KubeClient, ing: Ingress, plan: IngressTLSPlan | undefined, liveIngressVS?: KubeObject): Promise<void> {
  const apply = async <T extends KubeObject>(type: ResourceType, desired: T) => {
    const live = await kube.get<T>(type, desired.metadata.namespace ?? '', desired.metadata.name ?? '');
    await applyIfChanged(kube, type, live, desired, type === Resources.Gateway ? ownedWhole() : {});
  };
  if (plan) {
    await settleAll(plan.secrets.map((s) => apply(Resources.Secret, s)));
    await settleAll([...plan.wildcardGateways, ...plan.gateways].map((gw) => apply(Resources.Gateway, gw)));
    return;
  }
  const ns = ing.metadata.namespace ?? '';
  const name = ingressGatewayName(ing.metadata.name ?? '', DEFAULT_INGRESS_GATEWAY_SERVICE);
  const named = (liveIngressVS as { spec?: { gateways?: string[] } } | undefined)?.spec?.gateways ?? [];
  if (!named.includes(qualifiedGatewayName(ns, name))) return;
  const live = await kube.get<KubeObject>(Resources.Gateway, ns, name);
  if (live && isControlledBy(live, ing.metadata.uid)) await kube.delete(Resources.Gateway, ns, name);
}
