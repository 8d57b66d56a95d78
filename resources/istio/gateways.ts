// The two shared Istio Gateways hakn ships (hakn `config/serving/202-gateway.yaml`, which overrides net-istio's
// `config/202-gateway.yaml`, and net-istio's `config/203-local-gateway.yaml`). deploy/istio/gateways.yaml is the same
// objects as static YAML; test/unit/resources/istio/gateways.test.ts keeps the two equal.
import type { ObjectMeta } from '../../api/meta.js';
import {
  GATEWAY_NAMESPACE,
  ISTIO_NAMESPACE,
  ISTIO_NETWORKING_API_VERSION,
  KNATIVE_INGRESS_GATEWAY_NAME,
  KNATIVE_LOCAL_GATEWAY_NAME,
} from './names.js';

/**
 * The Secret the ingress gateway's HTTPS server reads through `credentialName`: hakn's self-signed wildcard
 * certificate, `istio-system/tls-cert` (`kubernetes.io/tls`), kept fresh by the gateway-certificate controller.
 * credentialName Secrets must live in the gateway workload's namespace.
 */
export const GATEWAY_TLS_SECRET_NAME = 'tls-cert';
export const GATEWAY_TLS_SECRET_NAMESPACE = ISTIO_NAMESPACE;

/** Pods of the Istio ingress gateway, selected by both Gateways. */
export const INGRESS_GATEWAY_SELECTOR: Readonly<Record<string, string>> = { istio: 'ingressgateway' };

/** Gateway server ports: HTTP 80 and HTTPS 443 on the ingress gateway, HTTP 8081 on the local gateway. */
export const INGRESS_GATEWAY_HTTP_PORT = 80;
export const INGRESS_GATEWAY_HTTPS_PORT = 443;
export const LOCAL_GATEWAY_HTTP_PORT = 8081;

/** Labels of the shared Gateways, as net-istio and hakn set them. */
export const GATEWAY_LABELS: Readonly<Record<string, string>> = {
  'app.kubernetes.io/component': 'net-istio',
  'app.kubernetes.io/name': 'knative-serving',
  'app.kubernetes.io/version': 'devel',
  'networking.knative.dev/ingress-provider': 'istio',
};

export interface GatewayServer {
  port: { number: number; name: string; protocol: 'HTTP' | 'HTTPS' | 'HTTP2' | 'GRPC' | 'TCP' | 'TLS' };
  hosts: string[];
  tls?: { mode: 'SIMPLE' | 'MUTUAL' | 'PASSTHROUGH' | 'ISTIO_MUTUAL'; credentialName?: string; httpsRedirect?: boolean };
}

export interface Gateway {
  apiVersion: string;
  kind: 'Gateway';
  metadata: ObjectMeta & { name: string; namespace: string; labels: Record<string, string> };
  spec: { selector: Record<string, string>; servers: GatewayServer[] };
}

/**
 * `knative-serving/knative-ingress-gateway` as hakn ships it: `http` on 80 (HTTP) and `https` on 443 (HTTPS, TLS
 * SIMPLE with `credentialName: tls-cert`), both for every host, on the pods labelled `istio: ingressgateway`.
 */
export function makeKnativeIngressGateway(): Gateway {
  return {
    apiVersion: ISTIO_NETWORKING_API_VERSION,
    kind: 'Gateway',
    metadata: { name: KNATIVE_INGRESS_GATEWAY_NAME, namespace: GATEWAY_NAMESPACE, labels: { ...GATEWAY_LABELS } },
    spec: {
      selector: { ...INGRESS_GATEWAY_SELECTOR },
      servers: [
        { port: { number: INGRESS_GATEWAY_HTTP_PORT, name: 'http', protocol: 'HTTP' }, hosts: ['*'] },
        {
          port: { number: INGRESS_GATEWAY_HTTPS_PORT, name: 'https', protocol: 'HTTPS' },
          hosts: ['*'],
          tls: { mode: 'SIMPLE', credentialName: GATEWAY_TLS_SECRET_NAME },
        },
      ],
    },
  };
}

/**
 * `knative-serving/knative-local-gateway`: `http` on 8081 (HTTP) for every host, on the same pods. Cluster-local
 * traffic reaches it through the ClusterIP Service `istio-system/knative-local-gateway` (80 → 8081).
 */
export function makeKnativeLocalGateway(): Gateway {
  return {
    apiVersion: ISTIO_NETWORKING_API_VERSION,
    kind: 'Gateway',
    metadata: { name: KNATIVE_LOCAL_GATEWAY_NAME, namespace: GATEWAY_NAMESPACE, labels: { ...GATEWAY_LABELS } },
    spec: {
      selector: { ...INGRESS_GATEWAY_SELECTOR },
      servers: [{ port: { number: LOCAL_GATEWAY_HTTP_PORT, name: 'http', protocol: 'HTTP' }, hosts: ['*'] }],
    },
  };
}

/** Both shared Gateways, ingress first (the order of deploy/istio/gateways.yaml). */
export function makeKnativeGateways(): Gateway[] {
  return [makeKnativeIngressGateway(), makeKnativeLocalGateway()];
}
