// Upstream's admission warnings as kubectl users see them: `kubectl apply` of a Service whose container leaves its
// security context at Kubernetes' defaults prints Knative's "Warning: …" line and the Service is created.
import { execFile } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { getObject, kubectl, stack } from '../harness/cluster.js';

/** kubectl with its stderr, where it prints the API server's warnings. */
function kubectlWithStderr(args: string[], input: string): Promise<{ stdout: string; stderr: string }> {
  const s = stack();
  return new Promise((resolve, reject) => {
    const child = execFile(s.bins.KUBECTL, ['--kubeconfig', s.kubeconfig, ...args], (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve({ stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}

afterAll(async () => {
  await kubectl(['delete', 'ksvc', 'warned', '--ignore-not-found', '--wait=false']);
});

describe('admission warnings', () => {
  it('kubectl apply prints the insecure-defaults warning with every field, and the Service is created', async () => {
    const manifest = {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Service',
      metadata: { name: 'warned', namespace: 'default' },
      spec: { template: { spec: { containers: [{ image: 'nginx:1.27', securityContext: { capabilities: {} } }] } } },
    };
    const { stdout, stderr } = await kubectlWithStderr(['apply', '-f', '-'], JSON.stringify(manifest));
    const sc = 'spec.template.spec.containers[0].securityContext';
    expect(stderr).toContain(
      'Warning: Kubernetes default value is insecure, Knative may default this to secure in a future release: ' +
        `${sc}.allowPrivilegeEscalation, ${sc}.capabilities.drop, ${sc}.runAsNonRoot, ${sc}.seccompProfile\n`,
    );
    expect(stdout).toContain('service.serving.knative.dev/warned created');
    expect(await getObject('ksvc', 'warned')).toBeDefined();
  });
});
