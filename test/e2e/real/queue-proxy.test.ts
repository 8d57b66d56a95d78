// queue-proxy for real, in front of Knative's own test images: it enforces a Revision's containerConcurrency,
// timeoutSeconds and responseStartTimeoutSeconds, each shown with requests through the ingress.
import { describe, expect, it } from 'vitest';
import { apply, hostOf, image, ksvc, request, serviceReady, tally, useNamespace } from '../../harness/real.js';

const ns = useNamespace('real-queue');

/** A Service whose one container has `spec` (Revision fields such as containerConcurrency) beside it. */
async function serviceWith(name: string, container: Record<string, unknown>, revisionSpec: Record<string, unknown>): Promise<string> {
  const manifest = ksvc(name, container) as { spec: { template: { spec: Record<string, unknown> } } };
  Object.assign(manifest.spec.template.spec, revisionSpec);
  await apply(manifest, ns);
  return hostOf((await serviceReady(name, ns)).status?.url);
}

describe('queue-proxy', () => {
  it('lets one request at a time reach a container whose containerConcurrency is 1', async () => {
    // singlethreaded answers 500 to a request that arrives while it serves another (each takes 500 ms).
    const unguarded = await serviceWith('overlapping', { image: image('singlethreaded') }, { containerConcurrency: 0 });
    const guarded = await serviceWith('one-at-a-time', { image: image('singlethreaded') }, { containerConcurrency: 1 });
    // Without the limit, concurrent requests overlap in the container and some fail: the image does detect it.
    const overlapping = await tally(unguarded, 16, { concurrency: 8 });
    expect(overlapping.failures.filter((f) => f.status === 500).length).toBeGreaterThan(0);
    // With it, each pod's queue-proxy holds the others back until its container is free.
    const queued = await tally(guarded, 16, { concurrency: 8 });
    expect(queued.failures).toEqual([]);
    expect([...queued.bodies.entries()]).toEqual([['One at a time', 16]]);
  });

  it('answers 504 when the container takes longer than timeoutSeconds to respond', async () => {
    const host = await serviceWith('timeout', { image: image('timeout') }, { timeoutSeconds: 2 });
    const slow = await request(host, { path: '/?initialTimeout=5000' });
    expect(slow.status).toBe(504);
    const quick = await request(host, { path: '/?initialTimeout=200&timeout=100' });
    expect({ status: quick.status, body: quick.body }).toEqual({ status: 200, body: 'Slept for 100 milliseconds' });
  });

  it('answers 504 when the first byte comes later than responseStartTimeoutSeconds, though within timeoutSeconds', async () => {
    const limited = await serviceWith('first-byte', { image: image('timeout') }, { timeoutSeconds: 20, responseStartTimeoutSeconds: 1 });
    const unlimited = await serviceWith('whole-request', { image: image('timeout') }, { timeoutSeconds: 20 });
    // Headers after 3 s: too late for a 1 s response start, well within the 20 s the request may take.
    const lateStart = await request(limited, { path: '/?initialTimeout=3000' });
    expect(lateStart.status).toBe(504);
    const sameRequest = await request(unlimited, { path: '/?initialTimeout=3000' });
    expect({ status: sameRequest.status, body: sameRequest.body }).toEqual({ status: 200, body: 'Slept for 0 milliseconds' });
    // An early first byte passes the limit.
    const early = await request(limited, { path: '/?initialTimeout=100' });
    expect({ status: early.status, body: early.body }).toEqual({ status: 200, body: 'Slept for 0 milliseconds' });
  });
});
