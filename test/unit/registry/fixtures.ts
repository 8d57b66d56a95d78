// Fake Kubernetes reads and pull-secret builders for the registry tests.
import type { ResourceType } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import type { ResolveContext } from '../../../registry/digest-resolver.js';

export interface FakeKube {
  objects: Map<string, KubeObject>;
  gets: string[];
  get<T extends KubeObject>(type: ResourceType, namespace: string, name: string): Promise<T | undefined>;
}

export function fakeKube(objects: KubeObject[] = []): FakeKube {
  const map = new Map<string, KubeObject>();
  for (const o of objects) map.set(`${o.kind}/${o.metadata.namespace}/${o.metadata.name}`, o);
  const gets: string[] = [];
  return {
    objects: map,
    gets,
    async get<T extends KubeObject>(type: ResourceType, namespace: string, name: string) {
      gets.push(`${type.kind}/${namespace}/${name}`);
      return map.get(`${type.kind}/${namespace}/${name}`) as T | undefined;
    },
  };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

export type AuthEntry = { auth?: string; username?: string; password?: string; identitytoken?: string; registrytoken?: string };

export function dockerConfigJsonSecret(name: string, auths: Record<string, AuthEntry>, namespace = 'default'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
  } as KubeObject;
}

export function dockercfgSecret(name: string, auths: Record<string, AuthEntry>, namespace = 'default'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type: 'kubernetes.io/dockercfg',
    data: { '.dockercfg': b64(JSON.stringify(auths)) },
  } as KubeObject;
}

export function serviceAccount(name: string, pullSecrets: string[], namespace = 'default'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name, namespace },
    imagePullSecrets: pullSecrets.map((n) => ({ name: n })),
  } as KubeObject;
}

export function basicAuth(username: string, password: string): string {
  return b64(`${username}:${password}`);
}

export function resolveCtx(over: Partial<ResolveContext> = {}): ResolveContext {
  return {
    namespace: 'default',
    serviceAccountName: undefined,
    imagePullSecrets: [],
    skipRegistries: ['kind.local', 'ko.local', 'dev.local'],
    timeoutSeconds: 5,
    ...over,
  };
}
