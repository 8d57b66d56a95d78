import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  GATEWAY_TLS_SECRET_NAME,
  GATEWAY_TLS_SECRET_NAMESPACE,
  makeKnativeGateways,
  makeKnativeIngressGateway,
  makeKnativeLocalGateway,
} from '../../../../resources/istio/gateways.js';
import { DEFAULT_INGRESS_GATEWAY, DEFAULT_LOCAL_GATEWAY } from '../../../../resources/istio/names.js';

const yamlPath = fileURLToPath(new URL('../../../../deploy/istio/gateways.yaml', import.meta.url));

const labels = {
  'app.kubernetes.io/component': 'net-istio',
  'app.kubernetes.io/name': 'knative-serving',
  'app.kubernetes.io/version': 'devel',
  'networking.knative.dev/ingress-provider': 'istio',
};

describe('shared Istio Gateways (hakn config/serving/202-gateway.yaml, net-istio config/203-local-gateway.yaml)', () => {
  it('knative-ingress-gateway serves HTTP 80 and HTTPS 443 with the self-signed tls-cert Secret (golden)', () => {
    expect(makeKnativeIngressGateway()).toEqual({
      apiVersion: 'networking.istio.io/v1beta1',
      kind: 'Gateway',
      metadata: { name: 'knative-ingress-gateway', namespace: 'knative-serving', labels },
      spec: {
        selector: { istio: 'ingressgateway' },
        servers: [
          { port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*'] },
          { port: { number: 443, name: 'https', protocol: 'HTTPS' }, hosts: ['*'], tls: { mode: 'SIMPLE', credentialName: 'tls-cert' } },
        ],
      },
    });
    expect([GATEWAY_TLS_SECRET_NAMESPACE, GATEWAY_TLS_SECRET_NAME]).toEqual(['istio-system', 'tls-cert']);
  });

  it('knative-local-gateway serves HTTP 8081 (golden)', () => {
    expect(makeKnativeLocalGateway()).toEqual({
      apiVersion: 'networking.istio.io/v1beta1',
      kind: 'Gateway',
      metadata: { name: 'knative-local-gateway', namespace: 'knative-serving', labels },
      spec: {
        selector: { istio: 'ingressgateway' },
        servers: [{ port: { number: 8081, name: 'http', protocol: 'HTTP' }, hosts: ['*'] }],
      },
    });
  });

  it('the qualified names are the ones the VirtualServices reference', () => {
    const [ingress, local] = makeKnativeGateways();
    expect(`${ingress!.metadata.namespace}/${ingress!.metadata.name}`).toBe(DEFAULT_INGRESS_GATEWAY);
    expect(`${local!.metadata.namespace}/${local!.metadata.name}`).toBe(DEFAULT_LOCAL_GATEWAY);
  });

  it('deploy/istio/gateways.yaml equals the builders', () => {
    const docs = parseAllDocuments(readFileSync(yamlPath, 'utf8'));
    for (const doc of docs) expect(doc.errors).toEqual([]);
    const objects = docs.map((d) => d.toJS() as unknown).filter((o) => o !== null && o !== undefined);
    expect(objects).toEqual(makeKnativeGateways());
  });

  it('returns fresh objects (callers may mutate them)', () => {
    const a = makeKnativeIngressGateway();
    a.spec.selector.istio = 'changed';
    a.metadata.labels['x'] = 'y';
    expect(makeKnativeIngressGateway().spec.selector).toEqual({ istio: 'ingressgateway' });
    expect(makeKnativeIngressGateway().metadata.labels).toEqual(labels);
  });
});
