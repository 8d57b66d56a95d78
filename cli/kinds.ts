// The kinds `kubectl tidal` tells the story of, by the names kubectl knows them by (short names included). Pure.

export interface StoryKind {
  kind: string;
  /** kubectl's fully qualified resource, so a Knative kind is never mistaken for a core one of the same name. */
  resource: string;
  names: readonly string[];
}

export const StoryKinds: readonly StoryKind[] = [
  { kind: 'Service', resource: 'services.serving.knative.dev', names: ['ksvc', 'kservice', 'kservices', 'services.serving.knative.dev'] },
  {
    kind: 'Configuration',
    resource: 'configurations.serving.knative.dev',
    names: ['cfg', 'config', 'configuration', 'configurations', 'configurations.serving.knative.dev'],
  },
  { kind: 'Revision', resource: 'revisions.serving.knative.dev', names: ['rev', 'revision', 'revisions', 'revisions.serving.knative.dev'] },
  { kind: 'Route', resource: 'routes.serving.knative.dev', names: ['rt', 'route', 'routes', 'routes.serving.knative.dev'] },
  {
    kind: 'DomainMapping',
    resource: 'domainmappings.serving.knative.dev',
    names: ['dm', 'domainmapping', 'domainmappings', 'domainmappings.serving.knative.dev'],
  },
  {
    kind: 'Ingress',
    resource: 'ingresses.networking.internal.knative.dev',
    names: ['king', 'kingress', 'kingresses', 'ingresses.networking.internal.knative.dev'],
  },
  {
    kind: 'Certificate',
    resource: 'certificates.networking.internal.knative.dev',
    names: ['kcert', 'kcerts', 'certificates.networking.internal.knative.dev'],
  },
];

/** The kind kubectl's `name` stands for (case-insensitive), or an error that says what to type instead. */
export function storyKindOf(name: string): StoryKind | Error {
  const n = name.toLowerCase();
  const found = StoryKinds.find((k) => k.names.includes(n) || k.kind.toLowerCase() === n);
  if (found) return found;
  if (n === 'svc') return new Error(`"${name}" is a Kubernetes Service; a Knative Service is ksvc (kubectl tidal ksvc/<name>)`);
  return new Error(`unknown kind "${name}": one of ${StoryKinds.map((k) => k.names[0]).join(', ')}`);
}
