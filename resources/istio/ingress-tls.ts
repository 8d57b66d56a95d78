// A KIngress's TLS as net-istio programs it (pkg/reconciler/ingress/ingress.go `reconcileIngress`,
// resources/gateway.go, resources/secret.go): the Secrets spec.tls names are
// copied into each gateway Service's namespace (Istio reads `credentialName` Secrets there only), and the Ingress gets
// Gateways of its own — one per gateway Service, in its namespace, with one HTTPS server per TLS entry and the HTTP
// server (`httpsRedirect` when `httpOption: Redirected`). A wildcard certificate gets one shared Gateway per
// (Secret, gateway Service) in the Secret's namespace instead (Istio cannot serve one certificate from several
// servers). The ExternalIP rules of the VirtualService then match on these Gateways.
import type { KubeObject, ObjectMeta, OwnerReference } from '../../api/meta.js';
import { NetworkingLabels, type HTTPOption, type IngressSpec, type IngressTLS } from '../../api/networking.js';
import { adler32 } from '../adler32.js';
import { byteOrder } from '../traffic.js';
import {
  ISTIO_NAMESPACE,
  ISTIO_NETWORKING_API_VERSION,
  INGRESS_LABEL_KEY,
  KINGRESS_API_VERSION,
  KINGRESS_KIND,
  qualifiedGatewayName,
} from './names.js';
import { INGRESS_GATEWAY_SELECTOR } from './gateways.js';

/** A gateway workload's Service (config-istio `external-gateways[].service`), with the selector its Gateways copy. */
export interface GatewayService {
  namespace: string;
  name: string;
  selector: Record<string, string>;
}

/** config-istio's default external gateway Service, `istio-ingressgateway.istio-system`, with hakn's selector. */
export const DEFAULT_INGRESS_GATEWAY_SERVICE: Readonly<GatewayService> = Object.freeze({
  namespace: ISTIO_NAMESPACE,
  name: 'istio-ingressgateway',
  selector: { ...INGRESS_GATEWAY_SELECTOR },
});

/** A Secret spec.tls names, as read, with the DNS names of the certificate in its `tls.crt` (in order). */
export interface OriginSecret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
  dnsNames: readonly string[];
}

export interface SecretCopy extends KubeObject {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: ObjectMeta & { name: string; namespace: string; labels: Record<string, string> };
  type?: string;
  data?: Record<string, string>;
}

export interface TLSServer {
  hosts: string[];
  port: { number: number; name: string; protocol: 'HTTP' | 'HTTPS' };
  tls?: {
    mode?: 'SIMPLE';
    serverCertificate?: string;
    privateKey?: string;
    credentialName?: string;
    minProtocolVersion?: 'TLSV1_2';
    httpsRedirect?: boolean;
  };
}

export interface IngressGateway {
  apiVersion: string;
  kind: 'Gateway';
  metadata: ObjectMeta & { name: string; namespace: string; ownerReferences: OwnerReference[] };
  spec: { selector: Record<string, string>; servers: TLSServer[] };
}

/** The Ingress fields the TLS programming reads. */
export interface TLSIngressLike {
  metadata: Pick<ObjectMeta, 'name' | 'namespace' | 'uid'>;
  spec: Pick<IngressSpec, 'tls' | 'rules' | 'httpOption'>;
}

/** What the Ingress's TLS adds to its Istio programming. */
export interface IngressTLSPlan {
  /** Copies of the origin Secrets in the gateway Services' namespaces. */
  secrets: SecretCopy[];
  /** The Ingress's own Gateways (owned by it, labelled with its name). */
  gateways: IngressGateway[];
  /** The shared Gateways of wildcard certificates (owned by their Secret). */
  wildcardGateways: IngressGateway[];
  /** The gateways the ExternalIP rules match on (`namespace/name`). */
  externalGateways: string[];
}

const DNS1123_LABEL_MAX = 63;
const DNS1123_LABEL = /^[a-zA-Z0-9](?:[-a-zA-Z0-9]*[a-zA-Z0-9])?$/;
const HTTP_SERVER_PORT_NAME = 'http-server';
const GATEWAY_HTTP_PORT = 80;
const GATEWAY_HTTPS_PORT = 443;

function isDNS1123Label(s: string): boolean {
  return s.length <= DNS1123_LABEL_MAX && DNS1123_LABEL.test(s);
}

/** `namespace/name` of a spec.tls entry's Secret (net-istio `secretKey`). */
export function secretKey(tls: Pick<IngressTLS, 'secretName' | 'secretNamespace'>): string {
  return `${tls.secretNamespace ?? ''}/${tls.secretName ?? ''}`;
}

/**
 * The Ingress's Gateway for one gateway Service (net-istio `GatewayName`): `<ingress>-<adler32("svcNs/svcName")>`, the
 * Ingress name replaced by its adler32 when not a DNS-1123 label and cut so the whole stays one.
 */
export function ingressGatewayName(ingressName: string, svc: Pick<GatewayService, 'namespace' | 'name'>): string {
  let prefix = isDNS1123Label(ingressName) ? ingressName : String(adler32(ingressName));
  const checksum = String(adler32(`${svc.namespace}/${svc.name}`));
  const max = DNS1123_LABEL_MAX - checksum.length - 1;
  if (prefix.length > max) prefix = prefix.slice(0, max);
  return `${prefix}-${checksum}`;
}

/** The shared Gateway of a wildcard Secret (net-istio `WildcardGatewayName`): `wildcard-<hex adler32>`. */
export function wildcardGatewayName(secretName: string, svcNamespace: string, svcName: string): string {
  return `wildcard-${adler32(`${secretName}-${svcNamespace}-${svcName}`).toString(16)}`;
}

/** The copy of a non-wildcard Secret in the gateway's namespace: `<ingress>-<origin uid>` (net-istio `targetSecret`). */
export function targetSecretName(ingressName: string, originUid: string): string {
  return `${ingressName}-${originUid}`;
}

/** The copy of a wildcard Secret: `<origin ns>--<origin name>-wildcard`. */
export function targetWildcardSecretName(originName: string, originNamespace: string): string {
  return `${originNamespace}--${originName}-wildcard`;
}

/**
 * Labels of a non-wildcard copy (net-istio `MakeTargetSecretLabels`): the origin's namespace and name, a name longer
 * than 63 characters cut and suffixed with its adler32 (the full name goes in an annotation).
 */
export function targetSecretLabels(originName: string, originNamespace: string): Record<string, string> {
  let name = originName;
  if (originName.length > DNS1123_LABEL_MAX) {
    const suffix = String(adler32(originName));
    name = `${originName.slice(0, DNS1123_LABEL_MAX - suffix.length - 1)}-${suffix}`;
  }
  return { [NetworkingLabels.originSecretNamespace]: originNamespace, [NetworkingLabels.originSecretName]: name };
}

/** `<ns>/<ingress>` (the name replaced by its adler32 when not a DNS-1123 label): the port-name prefix of its servers. */
function portNamePrefix(namespace: string, name: string): string {
  return `${namespace}/${isDNS1123Label(name) ? name : String(adler32(name))}`;
}

/** A wildcard certificate: its first DNS name's first label is `*` (net-istio `isWildcardSecret`). */
export function isWildcardSecret(secret: Pick<OriginSecret, 'metadata' | 'dnsNames'>): boolean {
  const first = secret.dnsNames[0];
  if (first === undefined)
    throw new Error(`certificate should have DNS names, but it has 0 (Secret ${secret.metadata.namespace ?? ''}/${secret.metadata.name ?? ''})`);
  const parts = first.split('.');
  if (parts.length <= 1) throw new Error(`incorrect domain format, got domain ${first}`);
  return parts[0] === '*';
}

/** The Ingress has a public rule (an unset visibility is ExternalIP, as `SetDefaults` makes it). */
export function isIngressPublic(ing: TLSIngressLike): boolean {
  return (ing.spec.rules ?? []).some((r) => (r.visibility ?? 'ExternalIP') === 'ExternalIP');
}

/** net-istio `shouldReconcileTLS`: public, with spec.tls entries. */
export function shouldReconcileTLS(ing: TLSIngressLike): boolean {
  return isIngressPublic(ing) && (ing.spec.tls ?? []).length > 0;
}

/** net-istio `shouldReconcileHTTPServer`: public, and TLS or `httpOption: Redirected`. */
export function shouldReconcileHTTPServer(ing: TLSIngressLike): boolean {
  return isIngressPublic(ing) && (ing.spec.httpOption === 'Redirected' || (ing.spec.tls ?? []).length > 0);
}

/** The hosts of the public rules, sorted and unique (net-istio `getPublicHosts`). */
export function publicHosts(ing: TLSIngressLike): string[] {
  const hosts = new Set<string>();
  for (const rule of ing.spec.rules ?? []) if ((rule.visibility ?? 'ExternalIP') === 'ExternalIP') for (const h of rule.hosts ?? []) hosts.add(h);
  return [...hosts].sort(byteOrder);
}

function sortServers(servers: TLSServer[]): TLSServer[] {
  return servers.sort((a, b) => byteOrder(a.port.name, b.port.name));
}

function httpsTLS(credentialName: string): NonNullable<TLSServer['tls']> {
  return { mode: 'SIMPLE', serverCertificate: 'tls.crt', privateKey: 'tls.key', credentialName, minProtocolVersion: 'TLSV1_2' };
}

/**
 * One HTTPS server per TLS entry (net-istio `MakeTLSServers`), port `<ns>/<ingress>:<i>` 443, its credential the Secret
 * itself when it already lives in the gateway's namespace, else its copy; sorted by port name.
 */
export function makeTLSServers(
  ing: TLSIngressLike,
  tls: readonly IngressTLS[],
  gatewayNamespace: string,
  origins: ReadonlyMap<string, Pick<OriginSecret, 'metadata'>>,
): TLSServer[] {
  const name = ing.metadata.name ?? '';
  const servers = tls.map((entry, i): TLSServer => {
    let credentialName = entry.secretName ?? '';
    if (entry.secretNamespace !== gatewayNamespace) {
      const origin = origins.get(secretKey(entry));
      if (!origin) throw new Error(`unable to get the original secret ${secretKey(entry)}`);
      credentialName = targetSecretName(name, origin.metadata.uid ?? '');
    }
    return {
      hosts: [...(entry.hosts ?? [])],
      port: { name: `${portNamePrefix(ing.metadata.namespace ?? '', name)}:${i}`, number: GATEWAY_HTTPS_PORT, protocol: 'HTTPS' },
      tls: httpsTLS(credentialName),
    };
  });
  return sortServers(servers);
}

/** The HTTP server of the Ingress's Gateways (net-istio `MakeHTTPServer`): `http-server` on 80, redirecting when asked. */
export function makeHTTPServer(httpOption: HTTPOption | undefined, hosts: readonly string[]): TLSServer | undefined {
  if (!httpOption) return undefined;
  const server: TLSServer = { hosts: [...hosts], port: { name: HTTP_SERVER_PORT_NAME, number: GATEWAY_HTTP_PORT, protocol: 'HTTP' } };
  if (httpOption === 'Redirected') server.tls = { httpsRedirect: true };
  return server;
}

function ingressOwnerRef(ing: TLSIngressLike): OwnerReference {
  return {
    apiVersion: KINGRESS_API_VERSION,
    kind: KINGRESS_KIND,
    name: ing.metadata.name ?? '',
    uid: ing.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

function makeIngressGateway(ing: TLSIngressLike, svc: GatewayService, servers: TLSServer[]): IngressGateway {
  return {
    apiVersion: ISTIO_NETWORKING_API_VERSION,
    kind: 'Gateway',
    metadata: {
      name: ingressGatewayName(ing.metadata.name ?? '', svc),
      namespace: ing.metadata.namespace ?? '',
      ownerReferences: [ingressOwnerRef(ing)],
      labels: { [INGRESS_LABEL_KEY]: ing.metadata.name ?? '' },
    },
    spec: { selector: { ...svc.selector }, servers: servers.map((s) => structuredClone(s)) },
  };
}

function makeWildcardGateway(secret: OriginSecret, svc: GatewayService): IngressGateway {
  const namespace = secret.metadata.namespace ?? '';
  const name = secret.metadata.name ?? '';
  const credentialName = namespace === svc.namespace ? name : targetWildcardSecretName(name, namespace);
  return {
    apiVersion: ISTIO_NETWORKING_API_VERSION,
    kind: 'Gateway',
    metadata: {
      name: wildcardGatewayName(name, svc.namespace, svc.name),
      namespace,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name, uid: secret.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      selector: { ...svc.selector },
      servers: [
        { hosts: [...secret.dnsNames], port: { name: 'https', number: GATEWAY_HTTPS_PORT, protocol: 'HTTPS' }, tls: httpsTLS(credentialName) },
      ],
    },
  };
}

function makeSecretCopy(
  origin: OriginSecret,
  name: string,
  namespace: string,
  labels: Record<string, string>,
  annotations?: Record<string, string>,
): SecretCopy {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace,
      // Propagated so that an informer filtering on it sees the copy too.
      labels: { ...labels, [NetworkingLabels.certificateUID]: origin.metadata.labels?.[NetworkingLabels.certificateUID] ?? '' },
      ...(annotations ? { annotations } : {}),
    },
    ...(origin.type !== undefined ? { type: origin.type } : {}),
    ...(origin.data !== undefined ? { data: { ...origin.data } } : {}),
  };
}

/**
 * Everything the Ingress's TLS and HTTP options add (net-istio `reconcileIngress` up to the VirtualServices):
 * `origins` are the Secrets spec.tls names, by {@link secretKey} (every one must be there); `gatewayServices` the
 * external gateway Services; `defaultExternalGateways` the shared Gateways the ExternalIP rules use when the Ingress has
 * no HTTP server of its own. With no TLS and no redirect, nothing is added and the shared Gateways serve it.
 */
export function planIngressTLS(
  ing: TLSIngressLike,
  origins: ReadonlyMap<string, OriginSecret>,
  gatewayServices: readonly GatewayService[],
  defaultExternalGateways: readonly string[],
): IngressTLSPlan {
  const plan: IngressTLSPlan = { secrets: [], gateways: [], wildcardGateways: [], externalGateways: [] };
  const external = new Set<string>();
  if (shouldReconcileTLS(ing)) {
    const nonWildcard = new Map<string, OriginSecret>();
    const wildcard = new Map<string, OriginSecret>();
    for (const entry of ing.spec.tls ?? []) {
      const key = secretKey(entry);
      const origin = origins.get(key);
      if (!origin) throw new Error(`secret ${key} not found`);
      (isWildcardSecret(origin) ? wildcard : nonWildcard).set(key, origin);
    }
    for (const origin of nonWildcard.values()) {
      const name = origin.metadata.name ?? '';
      const ns = origin.metadata.namespace ?? '';
      for (const svc of gatewayServices) {
        if (svc.namespace === ns) continue;
        const annotations = name.length > DNS1123_LABEL_MAX ? { [NetworkingLabels.originSecretName]: name } : undefined;
        plan.secrets.push(
          makeSecretCopy(
            origin,
            targetSecretName(ing.metadata.name ?? '', origin.metadata.uid ?? ''),
            svc.namespace,
            targetSecretLabels(name, ns),
            annotations,
          ),
        );
      }
    }
    for (const origin of wildcard.values()) {
      const name = origin.metadata.name ?? '';
      const ns = origin.metadata.namespace ?? '';
      for (const svc of gatewayServices)
        if (svc.namespace !== ns) plan.secrets.push(makeSecretCopy(origin, targetWildcardSecretName(name, ns), svc.namespace, {}));
    }
    const nonWildcardTLS = (ing.spec.tls ?? []).filter((t) => nonWildcard.has(secretKey(t)));
    if (nonWildcardTLS.length > 0)
      plan.gateways = gatewayServices.map((svc) => makeIngressGateway(ing, svc, makeTLSServers(ing, nonWildcardTLS, svc.namespace, nonWildcard)));
    for (const svc of gatewayServices) for (const origin of wildcard.values()) plan.wildcardGateways.push(makeWildcardGateway(origin, svc));
    for (const gw of plan.wildcardGateways) external.add(qualifiedGatewayName(gw.metadata.namespace, gw.metadata.name));
  }
  if (shouldReconcileHTTPServer(ing)) {
    const http = makeHTTPServer(ing.spec.httpOption, publicHosts(ing));
    if (plan.gateways.length === 0) plan.gateways = gatewayServices.map((svc) => makeIngressGateway(ing, svc, http ? [http] : []));
    else if (http) for (const gw of plan.gateways) gw.spec.servers.push(structuredClone(http));
  } else {
    for (const gw of defaultExternalGateways) external.add(gw);
  }
  for (const gw of plan.gateways) external.add(qualifiedGatewayName(gw.metadata.namespace, gw.metadata.name));
  plan.externalGateways = [...external].sort(byteOrder);
  return plan;
}
