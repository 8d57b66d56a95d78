// `npm run bench:tokens` (no stack, a few seconds): what the content tokens cost a new leader, which computes them
// for every object its start-up list finds (api/content-token.ts `contentTokens`). Times BENCH_TOKENS_OBJECTS (50,000)
// of a Revision's Deployment and of one of its pods, as the API server returns them, three rounds each, and prints
// milliseconds per round and microseconds per object. It asserts nothing.
import { contentTokens } from '../api/content-token.js';
import type { KubeObject } from '../api/meta.js';

const objects = Number(process.env.BENCH_TOKENS_OBJECTS ?? 50_000);

const labels = {
  app: 's-1',
  'serving.knative.dev/revision': 's-1-00001',
  'serving.knative.dev/service': 's-1',
  'serving.knative.dev/configuration': 's-1',
};
const containers = [
  {
    name: 'user-container',
    image: `registry.example.com/app@sha256:${'a'.repeat(64)}`,
    ports: [{ containerPort: 8080, name: 'user-port', protocol: 'TCP' }],
    env: [
      { name: 'PORT', value: '8080' },
      { name: 'K_REVISION', value: 's-1-00001' },
    ],
    readinessProbe: { tcpSocket: { port: 0 }, successThreshold: 1 },
    resources: {},
  },
  {
    name: 'queue-proxy',
    image: `registry.example.com/queue@sha256:${'b'.repeat(64)}`,
    env: Array.from({ length: 24 }, (_, i) => ({ name: `QUEUE_ENV_${i}`, value: `value-${i}` })),
    resources: { requests: { cpu: '25m' } },
  },
];
const metadata = (name: string, i: number) => ({
  name: `${name}-${i}`,
  namespace: 'default',
  uid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`,
  resourceVersion: String(1000 + i),
  generation: 1,
  labels,
  annotations: { 'serving.knative.dev/creator': 'admin', 'deployment.kubernetes.io/revision': '1' },
});

const deployment = (i: number): KubeObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata('s-1-00001-deployment', i),
    spec: {
      replicas: 2,
      selector: { matchLabels: { 'serving.knative.dev/revision': 's-1-00001' } },
      template: { metadata: { labels }, spec: { containers } },
    },
    status: {
      replicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
      conditions: [{ type: 'Available', status: 'True', lastTransitionTime: '2026-12-07T00:00:00Z', reason: 'MinimumReplicasAvailable' }],
    },
  }) as KubeObject;

const pod = (i: number): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: metadata('s-1-00001-deployment-abc', i),
    spec: { containers, nodeName: 'kwok-node-0', restartPolicy: 'Always' },
    status: {
      phase: 'Running',
      podIP: '10.0.0.1',
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True' })),
      containerStatuses: containers.map((c) => ({ name: c.name, ready: true, restartCount: 0, image: c.image })),
    },
  }) as KubeObject;

for (const [name, make] of [
  ['Deployment', deployment],
  ['Pod', pod],
] as const) {
  const list = Array.from({ length: objects }, (_, i) => make(i));
  for (let round = 1; round <= 3; round++) {
    const t0 = performance.now();
    for (const obj of list) contentTokens(obj);
    const ms = performance.now() - t0;
    console.log(`${name}: ${objects} objects in ${ms.toFixed(0)} ms (${((ms * 1000) / objects).toFixed(1)} µs each), round ${round}`);
  }
}
