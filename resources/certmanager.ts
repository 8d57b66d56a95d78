// Knative Certificates of class cert-manager.certificate.networking.knative.dev, as upstream's certificate reconciler
// makes them (serving pkg/reconciler/certificate: resources/cert_manager_certificate.go, certificate.go `reconcile`,
// config/cert_manager.go): config-certmanager's issuer references, the cert-manager Certificate a Knative Certificate
// becomes, and the Knative Certificate's status from the cert-manager Certificate's.
import { parse } from 'yaml';
import { CertificateTypeExternalDomain, type Certificate, type CertificateStatus } from '../api/certificate.js';
import type { Condition } from '../api/serving.js';
import { NetworkingLabels } from '../api/networking.js';
import { controllerRef } from './owner.js';

export const CertManagerConfigName = 'config-certmanager';
export const CERT_MANAGER_API_VERSION = 'cert-manager.io/v1';

/** A cert-manager issuer reference (`cmeta.ObjectReference`). */
export interface IssuerRef {
  name: string;
  kind?: string;
  group?: string;
}

/** config-certmanager: the issuer of each certificate type. */
export interface CertManagerConfig {
  issuerRef: IssuerRef;
  clusterLocalIssuerRef: IssuerRef;
  systemInternalIssuerRef: IssuerRef;
}

/** Upstream's default for all three: Knative's self-signed ClusterIssuer. */
const knativeSelfSignedIssuer: IssuerRef = { kind: 'ClusterIssuer', name: 'knative-selfsigned-issuer' };

/**
 * Parses config-certmanager (`issuerRef`, `clusterLocalIssuerRef`, `systemInternalIssuerRef`, each a YAML issuer
 * reference); an absent key keeps the default. Throws with the key and the reason for a value that is not one.
 */
export function parseCertManagerConfig(data: Readonly<Record<string, string>>): CertManagerConfig {
  const ref = (key: string): IssuerRef => {
    const v = data[key];
    if (v === undefined) return { ...knativeSelfSignedIssuer };
    let parsed: unknown;
    try {
      parsed = parse(v);
    } catch (err) {
      throw new Error(`${CertManagerConfigName} ${key}: not YAML: ${(err as Error).message}`, { cause: err });
    }
    const o = (parsed ?? {}) as Record<string, unknown>;
    if (typeof o !== 'object' || Array.isArray(o))
      throw new Error(`${CertManagerConfigName} ${key}: must be an issuer reference (name, kind, group)`);
    const out: IssuerRef = { ...knativeSelfSignedIssuer };
    for (const k of ['name', 'kind', 'group'] as const) {
      if (o[k] === undefined) continue;
      if (typeof o[k] !== 'string') throw new Error(`${CertManagerConfigName} ${key}.${k}: must be a string`);
      out[k] = o[k];
    }
    return out;
  };
  return {
    issuerRef: ref('issuerRef'),
    clusterLocalIssuerRef: ref('clusterLocalIssuerRef'),
    systemInternalIssuerRef: ref('systemInternalIssuerRef'),
  };
}

export interface CertManagerCertificate {
  apiVersion: typeof CERT_MANAGER_API_VERSION;
  kind: 'Certificate';
  metadata: {
    name: string;
    namespace: string;
    ownerReferences: ReturnType<typeof controllerRef>[];
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    resourceVersion?: string;
    generation?: number;
  };
  spec: {
    commonName?: string;
    secretName: string;
    dnsNames: string[];
    issuerRef: IssuerRef;
    secretTemplate: { labels: Record<string, string> };
  };
  status?: {
    conditions?: { type: string; status: string; reason?: string; message?: string; observedGeneration?: number }[];
    notAfter?: string;
    renewalTime?: string;
  };
}

/** Why no cert-manager Certificate can be made for a Knative Certificate: its Ready condition says so. */
export interface NotMade {
  reason: string;
  message: string;
}

const LONGEST = 63;
const SHORT_PREFIX = 'k.';

/**
 * The cert-manager Certificate of a Knative Certificate (upstream `MakeCertManagerCertificate`): same name,
 * namespace, labels and annotations, controlled by it; the first DNS name as common name (a name too long for one is
 * replaced by `k.<domain>` when the Certificate has a domain and is not a DomainMapping's); the issuer of its type; the
 * Secret labelled with the Knative Certificate's uid.
 */
export function makeCertManagerCertificate(cfg: CertManagerConfig, kcert: Certificate): CertManagerCertificate | NotMade {
  let commonName = kcert.spec.dnsNames[0];
  const dnsNames: string[] = [];
  if (commonName !== undefined && commonName.length > LONGEST) {
    const domain = kcert.spec.domain ?? '';
    if (domain === '')
      return {
        reason: 'CommonName Too Long',
        message: `error creating cert-manager certificate: CommonName (${commonName}) too long and field spec.Domain on Kcert is empty, cannot attempt to shorten`,
      };
    if (domain === commonName)
      return {
        reason: 'CommonName Too Long',
        message: `error creating cert-manager certificate: CommonName (${commonName}) longer than 63 characters`,
      };
    if (domain.length > LONGEST - SHORT_PREFIX.length)
      return {
        reason: 'CommonName Too Long',
        message: `error creating cert-manager certificate: CommonName (${domain})(length: ${domain.length}) too long, prepending short prefix of (${SHORT_PREFIX})(length: ${SHORT_PREFIX.length}) will be longer than 64 bytes`,
      };
    commonName = SHORT_PREFIX + domain;
    dnsNames.push(commonName);
  }
  dnsNames.push(...kcert.spec.dnsNames);
  const type = kcert.metadata.labels?.[NetworkingLabels.certificateType] ?? CertificateTypeExternalDomain;
  const issuerRef =
    type === CertificateTypeExternalDomain
      ? cfg.issuerRef
      : type === 'cluster-local-domain'
        ? cfg.clusterLocalIssuerRef
        : type === 'system-internal'
          ? cfg.systemInternalIssuerRef
          : undefined;
  if (!issuerRef)
    return { reason: 'certificate type invalid', message: `error creating cert-manager certificate: certificate type ${type} is invalid` };
  return {
    apiVersion: CERT_MANAGER_API_VERSION,
    kind: 'Certificate',
    metadata: {
      name: kcert.metadata.name ?? '',
      namespace: kcert.metadata.namespace ?? '',
      ownerReferences: [controllerRef(kcert)],
      ...(kcert.metadata.annotations ? { annotations: { ...kcert.metadata.annotations } } : {}),
      ...(kcert.metadata.labels ? { labels: { ...kcert.metadata.labels } } : {}),
    },
    spec: {
      ...(commonName !== undefined ? { commonName } : {}),
      secretName: kcert.spec.secretName,
      dnsNames,
      issuerRef: { ...issuerRef },
      secretTemplate: { labels: { [NetworkingLabels.certificateUID]: kcert.metadata.uid ?? '' } },
    },
  };
}

/** The cert-manager Ready reasons that mean "not yet" rather than "failed" (upstream `notReadyReasons`). */
const notReadyReasons = new Set(['InProgress', 'Pending', 'TemporaryCertificate']);

/**
 * The Knative Certificate's status from its cert-manager Certificate's (upstream `reconcile` after the apply): Ready
 * mirrored (no condition yet: Unknown `NoCertManagerCertCondition`; False for a reason that means "not yet": Unknown),
 * `Renewing` True once past the renewal time (Ready stays what it was), notAfter copied. `nowMs` decides the renewal.
 */
export function certificateStatusFromCertManager(kcert: Certificate, cm: CertManagerCertificate, nowMs: number, now: string): CertificateStatus {
  const prev = kcert.status?.conditions ?? [];
  const keep = (type: string) => prev.find((c) => c.type === type);
  const cond = (type: string, status: Condition['status'], reason?: string, message?: string): Condition => {
    const was = keep(type);
    const same = was?.status === status && was.reason === reason && was.message === message;
    return {
      type,
      status,
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
      lastTransitionTime: same && was.lastTransitionTime ? was.lastTransitionTime : now,
    };
  };
  const ready = cm.status?.conditions?.find((c) => c.type === 'Ready');
  let readyCond: Condition;
  let renewing: Condition | undefined;
  if (!ready) readyCond = cond('Ready', 'Unknown', 'NoCertManagerCertCondition', 'The ready condition of Cert Manager Certificate does not exist.');
  else if (ready.status === 'Unknown') readyCond = cond('Ready', 'Unknown', ready.reason, ready.message);
  else if (ready.status === 'False')
    readyCond = cond('Ready', notReadyReasons.has(ready.reason ?? '') ? 'Unknown' : 'False', ready.reason, ready.message);
  else if (cm.status?.renewalTime && nowMs > Date.parse(cm.status.renewalTime)) {
    readyCond = keep('Ready') ?? cond('Ready', 'Unknown');
    renewing = cond('Renewing', 'True');
  } else readyCond = cond('Ready', 'True');
  return {
    observedGeneration: kcert.metadata.generation ?? 0,
    conditions: [readyCond, ...(renewing ? [renewing] : [])],
    ...(cm.status?.notAfter ? { notAfter: cm.status.notAfter } : {}),
  };
}
