import { describe, expect, it } from 'vitest';
import { defaultDomainConfig, parseDomainConfig } from '../../../api/config/domain.js';
import type { DomainConfig } from '../../../api/config/domain.js';
import { defaultNetworkConfig, parseNetworkConfig } from '../../../api/config/network.js';
import type { NetworkConfig } from '../../../api/config/network.js';
import {
  clusterLocalHost,
  domainNameFromTemplate,
  fullyQualifiedDomainNameError,
  hostnameFromTemplate,
  isClusterLocal,
  routeAddressURL,
  routeDomain,
  routeURL,
  routeVisibility,
  tagURL,
  targetDomain,
  targetVisibility,
} from '../../../resources/domains.js';
import type { DomainResult, RouteLike } from '../../../resources/domains.js';
import { makeRoute } from '../../../resources/route.js';
import { service, withLabels } from '../../fixtures/serving.js';

const visibility = 'networking.knative.dev/visibility';

function value(r: DomainResult): string {
  if (!r.ok) throw new Error(`expected a value, got ${r.error}`);
  return r.value;
}
function error(r: DomainResult): string {
  if (r.ok) throw new Error(`expected an error, got ${r.value}`);
  return r.error;
}
function network(data: Record<string, string> = {}): NetworkConfig {
  const p = parseNetworkConfig(data);
  if (!p.ok) throw new Error(p.error);
  return p.value;
}
function domains(data: Record<string, string>): DomainConfig {
  const p = parseDomainConfig(data);
  if (!p.ok) throw new Error(p.error);
  return p.value;
}
function route(name: string, namespace: string, labels?: Record<string, string>, annotations?: Record<string, string>): RouteLike {
  return { metadata: { name, namespace, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) } };
}

const exampleCom = domains({ 'example.com': '' });

describe('Route status.url via domain-template, status.address.url cluster-local', () => {
  it('status.url = http://<route>.<ns>.<domain> with the default templates', () => {
    const r = route('nginx', 'default');
    expect(value(routeDomain(r, defaultNetworkConfig(), exampleCom))).toBe('nginx.default.example.com');
    expect(value(routeURL(r, defaultNetworkConfig(), exampleCom))).toBe('http://nginx.default.example.com');
  });

  it('status.address.url = http://<route>.<ns>.svc.cluster.local', () => {
    expect(routeAddressURL(route('nginx', 'default'))).toBe('http://nginx.default.svc.cluster.local');
    expect(routeAddressURL(route('nginx', 'default'), 'corp.internal')).toBe('http://nginx.default.svc.corp.internal');
    expect(clusterLocalHost('nginx', 'default')).toBe('nginx.default.svc.cluster.local');
  });

  it('follows a custom domain-template and default-external-scheme', () => {
    const net = network({ 'domain-template': '{{.Name}}-{{.Namespace}}.{{.Domain}}', 'default-external-scheme': 'https' });
    expect(value(routeURL(route('nginx', 'default'), net, exampleCom))).toBe('https://nginx-default.example.com');
  });

  it('renders templates with annotations and labels of the Route', () => {
    const net = network({ 'domain-template': '{{.Name}}.{{index .Annotations "sub"}}.{{index .Labels "team"}}.{{.Domain}}' });
    const r = route('nginx', 'default', { team: 'pay' }, { sub: 'eu' });
    expect(value(routeURL(r, net, exampleCom))).toBe('http://nginx.eu.pay.example.com');
  });

  it("uses the Route's config-domain domain (selectors on its labels)", () => {
    const cfg = domains({ 'example.com': '', 'svc.coolcoffee.company': 'selector:\n  app: coolcoffee.company' });
    expect(value(routeURL(route('menu', 'shop', { app: 'coolcoffee.company' }), defaultNetworkConfig(), cfg))).toBe(
      'http://menu.shop.svc.coolcoffee.company',
    );
    expect(value(routeURL(route('menu', 'shop', { app: 'tea' }), defaultNetworkConfig(), cfg))).toBe('http://menu.shop.example.com');
  });

  it('reports a host that is not a fully qualified domain name (ErrDomainName) with the reason', () => {
    const net = network({ 'domain-template': '{{.Name}}.{{index .Annotations "sub"}}.{{.Domain}}' });
    expect(error(routeURL(route('nginx', 'default'), net, exampleCom))).toBe(
      "invalid domain name \"nginx..example.com\": url: Invalid value: \"nginx..example.com\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
    expect(error(routeDomain(route('Nginx', 'default'), defaultNetworkConfig(), exampleCom))).toMatch(
      /^invalid domain name "Nginx\.default\.example\.com": /u,
    );
    const oneLabel = network({ 'domain-template': '{{.Name}}' });
    expect(error(routeDomain(route('nginx', 'default'), oneLabel, exampleCom))).toBe(
      'invalid domain name "nginx": url: Invalid value: "nginx": should be a domain with at least two segments separated by dots',
    );
  });

  it('reports a template that does not parse (a hand-built config) as an error, not a throw', () => {
    const bad: NetworkConfig = { ...defaultNetworkConfig(), domainTemplate: '{{.Nope}}.x.com' };
    expect(error(routeDomain(route('a', 'b'), bad, exampleCom))).toMatch(
      /^error executing the DomainTemplate "\{\{\.Nope\}\}\.x\.com": can't evaluate field Nope/u,
    );
    const badTag: NetworkConfig = { ...defaultNetworkConfig(), tagTemplate: '{{.Namespace}}' };
    expect(error(tagURL(route('a', 'b'), 'v1', badTag, exampleCom))).toMatch(/^error executing the TagTemplate/u);
  });
});

describe('tag URL host = tag-template rendered through domain-template', () => {
  it('http://<tag>-<route>.<ns>.<domain> with the defaults', () => {
    expect(value(tagURL(route('nginx', 'default'), 'v1', defaultNetworkConfig(), exampleCom))).toBe('http://v1-nginx.default.example.com');
    expect(value(targetDomain(route('nginx', 'default'), 'v1', defaultNetworkConfig(), exampleCom))).toBe('v1-nginx.default.example.com');
  });

  it('the tag host name part comes from tag-template; the default target is the route name', () => {
    expect(value(hostnameFromTemplate('nginx', '', '{{.Tag}}-{{.Name}}'))).toBe('nginx');
    expect(value(hostnameFromTemplate('nginx', 'v1', '{{.Tag}}-{{.Name}}'))).toBe('v1-nginx');
    expect(value(hostnameFromTemplate('nginx', 'v1', '{{.Name}}--{{.Tag}}'))).toBe('nginx--v1');
  });

  it('custom tag-template and domain-template compose', () => {
    const net = network({
      'tag-template': '{{.Name}}-{{.Tag}}',
      'domain-template': '{{.Name}}.{{.Namespace}}.apps.{{.Domain}}',
      'default-external-scheme': 'https',
    });
    expect(value(tagURL(route('nginx', 'default'), 'canary', net, exampleCom))).toBe('https://nginx-canary.default.apps.example.com');
  });
});

describe('config-domain without a default entry ⇒ cluster-local', () => {
  it("with hakn's config-domain (or none) every Route is cluster-local, whatever domain-template says", () => {
    const net = network({ 'domain-template': '{{.Name}}-{{.Namespace}}.{{.Domain}}', 'default-external-scheme': 'https' });
    for (const cfg of [defaultDomainConfig(), domains({ 'svc.cluster.local': '' }), domains({ 'prod.example.com': 'selector:\n  app: prod' })]) {
      const r = route('nginx', 'default');
      expect(routeVisibility(r, cfg)).toBe('ClusterLocal');
      expect(value(routeURL(r, net, cfg))).toBe('http://nginx.default.svc.cluster.local');
      expect(value(tagURL(r, 'v1', net, cfg))).toBe('http://v1-nginx.default.svc.cluster.local');
    }
  });

  it('a selector that gives svc.cluster.local makes the matching Routes cluster-local', () => {
    const cfg = domains({ 'example.com': '', 'svc.cluster.local': 'selector:\n  app: secret' });
    expect(routeVisibility(route('a', 'b', { app: 'secret' }), cfg)).toBe('ClusterLocal');
    expect(value(routeURL(route('a', 'b', { app: 'secret' }), defaultNetworkConfig(), cfg))).toBe('http://a.b.svc.cluster.local');
    expect(routeVisibility(route('a', 'b'), cfg)).toBe('ExternalIP');
  });
});

describe('networking.knative.dev/visibility=cluster-local on a Route or Service', () => {
  const net = network({ 'domain-template': '{{.Name}}-{{.Namespace}}.{{.Domain}}', 'default-external-scheme': 'https' });

  it('isClusterLocal reads the label', () => {
    expect(isClusterLocal({ [visibility]: 'cluster-local' })).toBe(true);
    expect(isClusterLocal({ [visibility]: 'ExternalIP' })).toBe(false);
    expect(isClusterLocal({})).toBe(false);
    expect(isClusterLocal(undefined)).toBe(false);
  });

  it('a labelled Route gets <name>.<ns>.svc.cluster.local over http, ignoring domain-template and the scheme', () => {
    const r = route('nginx', 'default', { [visibility]: 'cluster-local' });
    expect(routeVisibility(r, exampleCom)).toBe('ClusterLocal');
    expect(value(routeURL(r, net, exampleCom))).toBe('http://nginx.default.svc.cluster.local');
    expect(value(tagURL(r, 'v1', net, exampleCom))).toBe('http://v1-nginx.default.svc.cluster.local');
  });

  it("a labelled Service's Route (labels carried by makeRoute) is cluster-local too", () => {
    const r = makeRoute(service('nginx', 'default', withLabels({ [visibility]: 'cluster-local' })));
    expect(value(routeURL(r, net, exampleCom))).toBe('http://nginx.default.svc.cluster.local');
    const external = makeRoute(service('nginx', 'default'));
    expect(value(routeURL(external, net, exampleCom))).toBe('https://nginx-default.example.com');
  });
});

describe('the label on a tag placeholder Service makes only that tag cluster-local', () => {
  it('the tag gets a cluster-local http URL; the Route keeps its external one', () => {
    const net = network({ 'default-external-scheme': 'https' });
    const r = route('nginx', 'default');
    expect(targetVisibility(r, exampleCom, { placeholderClusterLocal: true })).toBe('ClusterLocal');
    expect(value(tagURL(r, 'v1', net, exampleCom, { placeholderClusterLocal: true }))).toBe('http://v1-nginx.default.svc.cluster.local');
    expect(value(tagURL(r, 'v2', net, exampleCom))).toBe('https://v2-nginx.default.example.com');
    expect(value(routeURL(r, net, exampleCom))).toBe('https://nginx.default.example.com');
  });
});

describe('domainNameFromTemplate and fullyQualifiedDomainNameError', () => {
  it('render the given domain and annotations, then check the host', () => {
    expect(
      value(
        domainNameFromTemplate(
          { name: 'a', namespace: 'b', domain: 'c.com', annotations: { sub: 's' } },
          '{{.Name}}.{{.Annotations.sub}}.{{.Domain}}',
        ),
      ),
    ).toBe('a.s.c.com');
    expect(error(domainNameFromTemplate({ name: 'a', namespace: 'b', domain: 'c.com' }, '{{.Name}}.{{.Annotations.sub}}.{{.Domain}}'))).toMatch(
      /^invalid domain name "a\.<no value>\.c\.com": /u,
    );
  });

  it("follow Kubernetes' IsFullyQualifiedDomainName", () => {
    expect(fullyQualifiedDomainNameError('a.b')).toBeUndefined();
    expect(fullyQualifiedDomainNameError('a.b.')).toBeUndefined();
    expect(fullyQualifiedDomainNameError('')).toBe('url: Required value');
    expect(fullyQualifiedDomainNameError('a')).toMatch(/at least two segments/u);
    expect(fullyQualifiedDomainNameError('-a.b')).toMatch(/RFC 1123 subdomain/u);
    expect(fullyQualifiedDomainNameError(`${'x'.repeat(64)}.com`)).toBe(
      `url: Invalid value: "${'x'.repeat(64)}": must be no more than 63 characters`,
    );
    expect(fullyQualifiedDomainNameError(`${'abcdefghi.'.repeat(26)}com`)).toMatch(/must be no more than 253 characters$/u);
  });
});
