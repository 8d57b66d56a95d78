// The conformance run's command line and ingress lookup (dev/conformance.ts), as the suite's documentation runs it
// against other implementations.
import { describe, expect, it } from 'vitest';
import { gatewayService, suiteFlags, SUITES, TIDAL_SETTINGS } from '../../dev/conformance.js';

describe('the conformance run', () => {
  it('passes the documented flags: kubeconfig, the ingress on 127.0.0.1, the registry as docker repo, no DNS, no log stream', () => {
    expect(suiteFlags({ kubeconfig: '/k/kubeconfig', registryHost: '127.0.0.1:17543' })).toEqual([
      '--kubeconfig=/k/kubeconfig',
      '--ingressendpoint=127.0.0.1',
      '--dockerrepo=127.0.0.1:17543/knative',
      '--resolvabledomain=false',
      '--disable-logstream',
      '--ingress-class=traefik.ingress.networking.knative.dev',
      '--enable-alpha',
      '--enable-beta',
    ]);
  });

  it("finds the ingress through a NodePort Service whose port 80 maps to the stack's ingress port", () => {
    expect(gatewayService(31080)).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'conformance-gateway', namespace: 'tidal-ingress' },
      spec: { type: 'NodePort', ports: [{ name: 'http', port: 80, targetPort: 80, nodePort: 31080 }] },
    });
  });

  it('runs api/v1 and runtime, and changes one shipped setting for Tidal, with its reason', () => {
    expect(Object.keys(SUITES)).toEqual(['api/v1', 'runtime']);
    expect(TIDAL_SETTINGS.map((s) => `${s.configMap} ${s.key}=${s.value}`)).toEqual(['config-autoscaler min-scale=1']);
    expect(TIDAL_SETTINGS[0]?.why).toMatch(/TestProbeRuntimeAfterStartup/);
  });
});
