// config-istio (net-istio's pkg/reconciler/ingress/config/istio.go): the Istio Gateways KIngresses of class istio are
// bound to, each with the Kubernetes Service in front of it (reported as the KIngress's load balancer). Two forms, as
// net-istio reads them: `gateway.<namespace>.<name>: <service>` and `local-gateway.<namespace>.<name>: <service>`
// (a key without a namespace means the system namespace), or the YAML lists `external-gateways` / `local-gateways`
// of `{namespace, name, service}` (an explicit `[]` removes that kind: mesh-only when both are empty). Either kind
// left unset keeps the default gateway. Gateways chosen by `labelSelector` are refused (ADR 0020). Pure.
import { parse } from 'yaml';
import { dns1123SubdomainErrors } from '../k8s-names.js';
import { ConfigKeyError, runParser } from './deployment.js';
import type { Parsed } from './types.js';

export const IstioConfigName = 'config-istio';

export interface IstioGateway {
  namespace: string;
  name: string;
  /** The Service in front of the gateway's pods (`<name>.<namespace>.svc.cluster.local`). */
  service: string;
}

export interface IstioConfig {
  /** For ExternalIP rules; the first is the one whose Service the KIngress reports as its public load balancer. */
  ingressGateways: IstioGateway[];
  /** For ClusterLocal rules. */
  localGateways: IstioGateway[];
}

const SYSTEM_NAMESPACE = 'knative-serving';
const gatewayPrefix = 'gateway.';
const localGatewayPrefix = 'local-gateway.';
const externalGatewaysKey = 'external-gateways';
const localGatewaysKey = 'local-gateways';

/** net-istio's defaults: knative-ingress-gateway behind istio-ingressgateway, knative-local-gateway behind its own. */
export function defaultIstioConfig(): IstioConfig {
  return {
    ingressGateways: [
      { namespace: SYSTEM_NAMESPACE, name: 'knative-ingress-gateway', service: 'istio-ingressgateway.istio-system.svc.cluster.local' },
    ],
    localGateways: [{ namespace: SYSTEM_NAMESPACE, name: 'knative-local-gateway', service: 'knative-local-gateway.istio-system.svc.cluster.local' }],
  };
}

/** `namespace/name`, as VirtualServices name a gateway. */
export const qualifiedName = (g: IstioGateway): string => `${g.namespace}/${g.name}`;

/** `gateway.<ns>.<name>` keys (sorted by key, as net-istio sorts them). */
function oldFormat(data: Readonly<Record<string, string>>, prefix: string): IstioGateway[] {
  return Object.keys(data)
    .filter((k) => k.startsWith(prefix) && k !== prefix)
    .sort()
    .map((k) => {
      const rest = k.slice(prefix.length);
      const dot = rest.indexOf('.');
      const [namespace, name] = dot === -1 ? [SYSTEM_NAMESPACE, rest] : [rest.slice(0, dot), rest.slice(dot + 1)];
      return { namespace, name, service: data[k] ?? '' };
    });
}

/** One YAML list of gateways; `key` is the config map key, for errors. */
function newFormat(key: string, raw: string): IstioGateway[] {
  let doc: unknown;
  try {
    doc = parse(raw);
  } catch (err) {
    throw new ConfigKeyError(
      key,
      `failed to parse configmap: failed to parse ${JSON.stringify(key)} gateways: failed to unmarshal: ${(err as Error).message.split('\n')[0] ?? ''}`,
    );
  }
  if (doc === null || doc === undefined) return [];
  if (!Array.isArray(doc))
    throw new ConfigKeyError(
      key,
      `failed to parse configmap: failed to parse ${JSON.stringify(key)} gateways: failed to unmarshal: not a list of gateways`,
    );
  return doc.map((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new ConfigKeyError(
        key,
        `failed to parse configmap: failed to parse ${JSON.stringify(key)} gateways: failed to unmarshal: entry ${i} is not an object`,
      );
    }
    const e = entry as Record<string, unknown>;
    const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');
    if (e.labelSelector !== undefined && e.labelSelector !== null) {
      throw new ConfigKeyError(key, `gateway ${str(e.namespace)}/${str(e.name)}: labelSelector is not supported; name one gateway per kind`);
    }
    return { namespace: str(e.namespace), name: str(e.name), service: str(e.service) };
  });
}

/** Gateway.Validate. */
function gatewayProblem(g: IstioGateway): string | undefined {
  if (g.namespace === '') return 'missing namespace';
  if (g.name === '') return 'missing name';
  if (g.service === '') return 'missing service';
  const errs = dns1123SubdomainErrors(g.service.replace(/\.$/u, ''));
  if (errs.length > 0) return `invalid gateway service format: [${errs.join(' ')}]`;
  return undefined;
}

/** Parses config-istio's data with net-istio's rules and messages; an error names the offending key. */
export function parseIstioConfig(data: Readonly<Record<string, string>>): Parsed<IstioConfig> {
  return runParser(IstioConfigName, () => {
    const external = data[externalGatewaysKey] ?? '';
    const local = data[localGatewaysKey] ?? '';
    const newDefined = external !== '' || local !== '';
    const oldKeys = Object.keys(data).filter((k) => k.startsWith(gatewayPrefix) || k.startsWith(localGatewayPrefix));
    const defaults = defaultIstioConfig();
    let cfg: IstioConfig;
    if (newDefined && oldKeys.length > 0) {
      throw new ConfigKeyError(
        external !== '' ? externalGatewaysKey : localGatewaysKey,
        `invalid configmap: "${localGatewaysKey}" or "${externalGatewaysKey}" can not be defined simultaneously with "${gatewayPrefix}" or "${localGatewayPrefix}"`,
      );
    }
    if (newDefined) {
      cfg = {
        ingressGateways: external !== '' ? newFormat(externalGatewaysKey, external) : defaults.ingressGateways,
        localGateways: local !== '' ? newFormat(localGatewaysKey, local) : defaults.localGateways,
      };
      // Without selectors every listed gateway is a default one, and each kind may have one (or none: mesh-only).
      const goList = (gws: IstioGateway[]) => `[${gws.map((g) => `{${g.namespace} ${g.name} ${g.service} <nil>}`).join(' ')}]`;
      if (cfg.ingressGateways.length > 1) {
        throw new ConfigKeyError(
          externalGatewaysKey,
          `failed to parse configmap: exactly one external gateway with no selector can be defined, here: ${goList(cfg.ingressGateways)}`,
        );
      }
      if (cfg.localGateways.length > 1) {
        throw new ConfigKeyError(
          localGatewaysKey,
          `failed to parse configmap: exactly one local gateway with no selector can be defined, here: ${goList(cfg.localGateways)}`,
        );
      }
    } else {
      const ingress = oldFormat(data, gatewayPrefix);
      const localGws = oldFormat(data, localGatewayPrefix);
      cfg = {
        ingressGateways: ingress.length > 0 ? ingress : defaults.ingressGateways,
        localGateways: localGws.length > 0 ? localGws : defaults.localGateways,
      };
    }
    const check = (gws: IstioGateway[], kind: string, keyOf: (g: IstioGateway) => string) => {
      for (const g of gws) {
        const problem = gatewayProblem(g);
        if (problem !== undefined) throw new ConfigKeyError(keyOf(g), `invalid configuration: invalid ${kind} ${qualifiedName(g)}: ${problem}`);
      }
    };
    const oldKey = (prefix: string) => (g: IstioGateway) => oldKeys.find((k) => k === `${prefix}${g.namespace}.${g.name}`) ?? `${prefix}${g.name}`;
    check(cfg.ingressGateways, 'gateway', newDefined ? () => externalGatewaysKey : oldKey(gatewayPrefix));
    check(cfg.localGateways, 'local gateway', newDefined ? () => localGatewaysKey : oldKey(localGatewayPrefix));
    return cfg;
  });
}
