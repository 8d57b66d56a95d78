// config-istio: both of net-istio's forms, its defaults and its refusals (key and reason), the shipped file, and the
// gateways the VirtualServices and the KIngress status take from it.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateConfigMapForAdmission } from '../../../api/admission.js';
import { defaultIstioConfig, parseIstioConfig, qualifiedName, type IstioConfig } from '../../../api/config/istio.js';
import { shippedConfigData } from '../../fixtures/shipped-config.js';

const parsed = (data: Record<string, string>): IstioConfig => {
  const p = parseIstioConfig(data);
  if (!p.ok) throw new Error(p.error);
  return p.value;
};
const refusal = (data: Record<string, string>) => validateConfigMapForAdmission('config-istio', data);

describe('config-istio', () => {
  it("defaults to knative-ingress-gateway and knative-local-gateway behind Istio's Services", () => {
    expect(parsed({})).toEqual(defaultIstioConfig());
    expect(defaultIstioConfig().ingressGateways.map(qualifiedName)).toEqual(['knative-serving/knative-ingress-gateway']);
    expect(defaultIstioConfig().localGateways[0]?.service).toBe('knative-local-gateway.istio-system.svc.cluster.local');
  });

  it('reads gateway.<ns>.<name> and local-gateway.<ns>.<name> (a name alone is in the system namespace), sorted by key', () => {
    const cfg = parsed({
      'gateway.edge.public-b': 'gw-b.edge.svc.cluster.local',
      'gateway.edge.public-a': 'gw-a.edge.svc.cluster.local.',
      'local-gateway.private': 'private.istio-system.svc.cluster.local',
    });
    expect(cfg.ingressGateways).toEqual([
      { namespace: 'edge', name: 'public-a', service: 'gw-a.edge.svc.cluster.local.' },
      { namespace: 'edge', name: 'public-b', service: 'gw-b.edge.svc.cluster.local' },
    ]);
    expect(cfg.localGateways).toEqual([{ namespace: 'knative-serving', name: 'private', service: 'private.istio-system.svc.cluster.local' }]);
  });

  it('reads the external-gateways / local-gateways YAML lists; one unset keeps its default, [] removes that kind', () => {
    const cfg = parsed({ 'external-gateways': '- name: edge\n  namespace: infra\n  service: edge.infra.svc.cluster.local\n' });
    expect(cfg).toEqual({
      ingressGateways: [{ namespace: 'infra', name: 'edge', service: 'edge.infra.svc.cluster.local' }],
      localGateways: defaultIstioConfig().localGateways,
    });
    expect(parsed({ 'external-gateways': '[]', 'local-gateways': '[]' })).toEqual({ ingressGateways: [], localGateways: [] });
  });

  it("refuses what net-istio refuses, naming the key, with net-istio's reason", () => {
    expect(refusal({ 'gateway.edge.public': '' })).toEqual([
      { path: 'gateway.edge.public', message: 'invalid configuration: invalid gateway edge/public: missing service' },
    ]);
    expect(refusal({ 'local-gateway.edge.private': 'Not_A_Host' })[0]).toMatchObject({
      path: 'local-gateway.edge.private',
      message: expect.stringMatching(
        /^invalid configuration: invalid local gateway edge\/private: invalid gateway service format: \[a lowercase RFC 1123 subdomain/,
      ) as unknown,
    });
    expect(refusal({ 'external-gateways': '[]', 'gateway.a.b': 'b.a.svc' })).toEqual([
      {
        path: 'external-gateways',
        message: 'invalid configmap: "local-gateways" or "external-gateways" can not be defined simultaneously with "gateway." or "local-gateway."',
      },
    ]);
    expect(refusal({ 'external-gateways': '- name: a\n  namespace: n\n  service: a.n\n- name: b\n  namespace: n\n  service: b.n\n' })).toEqual([
      {
        path: 'external-gateways',
        message: 'failed to parse configmap: exactly one external gateway with no selector can be defined, here: [{n a a.n <nil>} {n b b.n <nil>}]',
      },
    ]);
    expect(refusal({ 'local-gateways': '- name: a\n  service: a.n\n' })).toEqual([
      { path: 'local-gateways', message: 'invalid configuration: invalid local gateway /a: missing namespace' },
    ]);
    expect(refusal({ 'local-gateways': 'name: [' })[0]?.message).toMatch(
      /^failed to parse configmap: failed to parse "local-gateways" gateways: failed to unmarshal: /,
    );
    expect(refusal({ 'external-gateways': '- name: a\n  namespace: n\n  service: a.n\n  labelSelector: {matchLabels: {x: y}}\n' })).toEqual([
      { path: 'external-gateways', message: 'gateway n/a: labelSelector is not supported; name one gateway per kind' },
    ]);
  });

  it("the shipped file sets nothing and its _example is the defaults in net-istio's key form", () => {
    const data = shippedConfigData('config-istio');
    expect(Object.keys(data)).toEqual(['_example']);
    expect(parsed(parse(data._example ?? '') as Record<string, string>)).toEqual(defaultIstioConfig());
  });
});
