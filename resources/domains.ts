// Host names and URLs of a Route and its tags (Knative's pkg/reconciler/route/domains, the status URL rules of
// route.go and traffic.go, and the route-level rule of visibility.go). Pure: configs are parameters.
//
// Go templates (config-network; parsed by api/config/network.ts):
//   domain-template  {{.Name}} the host name part (route name, or the tag host from tag-template), {{.Namespace}},
//                    {{.Domain}} (from config-domain), {{.Annotations.<key>}} / {{index .Annotations "<key>"}} and
//                    {{.Labels.<key>}} / {{index .Labels "<key>"}} (the Route's); default {{.Name}}.{{.Namespace}}.{{.Domain}}
//   tag-template     {{.Name}} the route name, {{.Tag}} the traffic tag; default {{.Tag}}-{{.Name}}
// A cluster-local target always uses the default domain template with Domain `svc.<cluster-domain>`, so its host is
// `<name>.<namespace>.svc.cluster.local` whatever domain-template says.
import { DefaultClusterDomain, VisibilityClusterLocal, clusterLocalDomain, lookupDomainForLabels } from '../api/config/domain.js';
import type { DomainConfig } from '../api/config/domain.js';
import { DefaultDomainTemplate, executeDomainTemplate, executeTagTemplate, parseDomainTemplate, parseTagTemplate } from '../api/config/network.js';
import type { NetworkConfig } from '../api/config/network.js';
import { Labels } from '../api/labels.js';
import type { ObjectMeta } from '../api/meta.js';

/**
 * A host name or URL, or why it cannot be made. Every failure here is Knative's ErrDomainName (a template that does
 * not execute, or a result that is not a fully qualified domain name): the Route reports `AllTrafficAssigned=False`,
 * reason `ErrorConfig`, with this message behind `domain name error: ` (`domainNameErrorMessage`).
 */
export type DomainResult = { ok: true; value: string } | { ok: false; error: string };

/** Knative's `ErrDomainName` text: the message of a Route's ErrorConfig condition starts with it. */
export const ErrDomainName = 'domain name error';

/** The condition message for a failed DomainResult, as Knative wraps it (`domain name error: <why>`). */
export function domainNameErrorMessage(error: string): string {
  return `${ErrDomainName}: ${error}`;
}

/** What the functions below read of a Route (a Service works too: its labels and annotations are the Route's). */
export interface RouteLike {
  metadata: Pick<ObjectMeta, 'name' | 'namespace' | 'labels' | 'annotations'>;
}

/** Visibility of a Route or one of its traffic targets (KIngress `visibility`). */
export type Visibility = 'ClusterLocal' | 'ExternalIP';

/** True when `labels` carry `networking.knative.dev/visibility: cluster-local`. */
export function isClusterLocal(labels: Readonly<Record<string, string>> | undefined): boolean {
  return labels?.[Labels.visibility] === VisibilityClusterLocal;
}

/** `<name>.<namespace>.svc.<cluster-domain>`: a Route's (or Service's) in-cluster host. */
export function clusterLocalHost(name: string, namespace: string, clusterDomain: string = DefaultClusterDomain): string {
  return `${name}.${namespace}.${clusterLocalDomain(clusterDomain)}`;
}

/** `status.address.url` of a Route: `http://<route>.<ns>.svc.<cluster-domain>`. */
export function routeAddressURL(route: RouteLike, clusterDomain: string = DefaultClusterDomain): string {
  return `http://${clusterLocalHost(route.metadata.name ?? '', route.metadata.namespace ?? '', clusterDomain)}`;
}

const dns1123LabelRe = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/u;
const dns1123SubdomainRe = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/u;
const dns1123SubdomainMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const dns1123LabelMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/**
 * Kubernetes' validation.IsFullyQualifiedDomainName, which Knative applies to every rendered host: an optional
 * trailing dot, a lowercase RFC 1123 subdomain of at most 253 characters, at least two labels of at most 63. Returns
 * the reason in Kubernetes' words, or undefined when `name` is valid.
 */
export function fullyQualifiedDomainNameError(name: string): string | undefined {
  if (name === '') return 'url: Required value';
  const host = name.endsWith('.') ? name.slice(0, -1) : name;
  const invalid = (value: string, msg: string): string => `url: Invalid value: ${JSON.stringify(value)}: ${msg}`;
  if (host.length > 253) return invalid(host, 'must be no more than 253 characters');
  if (!dns1123SubdomainRe.test(host)) return invalid(host, dns1123SubdomainMsg);
  const labels = host.split('.');
  if (labels.length < 2) return invalid(host, 'should be a domain with at least two segments separated by dots');
  for (const label of labels) {
    if (label.length > 63) return invalid(label, 'must be no more than 63 characters');
    if (!dns1123LabelRe.test(label)) return invalid(label, dns1123LabelMsg);
  }
  return undefined;
}

/**
 * Renders `template` (a domain template) over a Route's values and checks that the result is a fully qualified
 * domain name (Knative's DomainNameFromTemplate once the domain is known).
 */
export function domainNameFromTemplate(
  values: {
    name: string;
    namespace: string;
    domain: string;
    annotations?: Readonly<Record<string, string>> | undefined;
    labels?: Readonly<Record<string, string>> | undefined;
  },
  template: string,
): DomainResult {
  const t = parseDomainTemplate(template);
  if (!t.ok) return { ok: false, error: `error executing the DomainTemplate ${JSON.stringify(template)}: ${t.error}` };
  const host = executeDomainTemplate(t, values);
  const bad = fullyQualifiedDomainNameError(host);
  return bad === undefined ? { ok: true, value: host } : { ok: false, error: `invalid domain name ${JSON.stringify(host)}: ${bad}` };
}

/** A traffic target's host name part: the route name for the default target (tag ""), else the tag template's result. */
export function hostnameFromTemplate(name: string, tag: string, tagTemplate: string): DomainResult {
  if (tag === '') return { ok: true, value: name };
  const t = parseTagTemplate(tagTemplate);
  if (!t.ok) return { ok: false, error: `error executing the TagTemplate ${JSON.stringify(tagTemplate)}: ${t.error}` };
  return { ok: true, value: executeTagTemplate(t, { name, tag }) };
}

/**
 * The Route's own visibility (visibility.go routeVisibility): ClusterLocal when config-domain gives it the domain
 * `svc.<cluster-domain>` (its visibility label, a selector, or the default entry), else ExternalIP.
 */
export function routeVisibility(route: RouteLike, domainCfg: DomainConfig, clusterDomain: string = DefaultClusterDomain): Visibility {
  return lookupDomainForLabels(domainCfg, route.metadata.labels, clusterDomain) === clusterLocalDomain(clusterDomain) ? 'ClusterLocal' : 'ExternalIP';
}

/** Options for one traffic target. */
export interface TargetOptions {
  /** The target's placeholder Kubernetes Service carries a non-empty `networking.knative.dev/visibility` label. */
  placeholderClusterLocal?: boolean;
  clusterDomain?: string;
}

/** A target's visibility: the more restrictive of the Route's and its placeholder Service's. */
export function targetVisibility(route: RouteLike, domainCfg: DomainConfig, opts: TargetOptions = {}): Visibility {
  if (opts.placeholderClusterLocal === true) return 'ClusterLocal';
  return routeVisibility(route, domainCfg, opts.clusterDomain);
}

/**
 * The full host of the traffic target `tag` ("" = the default target): the tag template gives the host name part,
 * then the domain template renders it with the Route's namespace, annotations and labels and its config-domain
 * domain. A cluster-local target uses the default domain template and `svc.<cluster-domain>`.
 */
export function targetDomain(
  route: RouteLike,
  tag: string,
  networkCfg: NetworkConfig,
  domainCfg: DomainConfig,
  opts: TargetOptions = {},
): DomainResult {
  const clusterDomain = opts.clusterDomain ?? DefaultClusterDomain;
  const { name = '', namespace = '', annotations } = route.metadata;
  const hostname = hostnameFromTemplate(name, tag, networkCfg.tagTemplate);
  if (!hostname.ok) return hostname;
  // Knative sets (or removes) the visibility label on a copy of the Route's metadata before the domain lookup.
  const labels: Record<string, string> = { ...route.metadata.labels };
  const local = targetVisibility(route, domainCfg, opts) === 'ClusterLocal';
  if (local) labels[Labels.visibility] = VisibilityClusterLocal;
  else delete labels[Labels.visibility];
  const domain = lookupDomainForLabels(domainCfg, labels, clusterDomain);
  return domainNameFromTemplate(
    { name: hostname.value, namespace, domain, annotations, labels },
    local ? DefaultDomainTemplate : networkCfg.domainTemplate,
  );
}

/** The host of the Route's default target (what `status.url` points at), e.g. `nginx.default.example.com`. */
export function routeDomain(route: RouteLike, networkCfg: NetworkConfig, domainCfg: DomainConfig, opts: TargetOptions = {}): DomainResult {
  return targetDomain(route, '', networkCfg, domainCfg, opts);
}

function targetURL(route: RouteLike, tag: string, networkCfg: NetworkConfig, domainCfg: DomainConfig, opts: TargetOptions): DomainResult {
  const host = targetDomain(route, tag, networkCfg, domainCfg, opts);
  if (!host.ok) return host;
  const scheme = targetVisibility(route, domainCfg, opts) === 'ClusterLocal' ? 'http' : networkCfg.defaultExternalScheme;
  return { ok: true, value: `${scheme}://${host.value}` };
}

/**
 * `status.url` of a Route: `http://<host>` for a cluster-local Route, else `<default-external-scheme>://<host>`
 * (before any certificate switches it to https).
 */
export function routeURL(route: RouteLike, networkCfg: NetworkConfig, domainCfg: DomainConfig, opts: TargetOptions = {}): DomainResult {
  return targetURL(route, '', networkCfg, domainCfg, opts);
}

/** `status.traffic[].url` of a tagged target, e.g. `http://v1-nginx.default.example.com`. */
export function tagURL(route: RouteLike, tag: string, networkCfg: NetworkConfig, domainCfg: DomainConfig, opts: TargetOptions = {}): DomainResult {
  return targetURL(route, tag, networkCfg, domainCfg, opts);
}
