// A Revision's pod spec as Knative's webhook validates it (pkg/apis/serving/k8s_validation.go and the field masks
// of fieldmask.go): the same rules, messages and paths — including upstream's quirks where they show in the answer
// (errors without a path, init containers reported under `containers[i]`, a duplicate container name re-prefixing
// the errors found before it, a bad volume name replacing that volume's other errors). Pure.
import { isQuantity } from './config/deployment.js';
import { at, disallowed, generic, invalid, missing, missingOneOf, multipleOneOf, outOfBounds, via, type FieldError } from './field-error.js';
import { cleanPath, dns1123LabelErrors, dns1123SubdomainErrors, isImageReference } from './k8s-names.js';
import type { Container, RevisionSpec } from './serving.js';

/** config-features' `secure-pod-defaults` values. */
export type SecurePodDefaults = 'Disabled' | 'AllowRootBounded' | 'Enabled';

/** The config-features flags that change what validation accepts (each true = Enabled or Allowed). */
export interface PodSpecFeatures {
  /** `multi-container` (Knative default: Enabled). */
  multiContainer: boolean;
  /** `multi-container-probing` (Disabled). */
  multiContainerProbing: boolean;
  /** `kubernetes.podspec-init-containers` (Disabled). */
  initContainers: boolean;
  /** `kubernetes.podspec-volumes-emptydir` (Enabled). */
  emptyDir: boolean;
  /** `kubernetes.podspec-persistent-volume-claim` (Disabled). */
  persistentVolumeClaim: boolean;
  /** `kubernetes.podspec-persistent-volume-write` (Disabled). */
  persistentVolumeWrite: boolean;
  /** `kubernetes.podspec-volumes-hostpath` (Disabled). */
  hostPath: boolean;
  /** `kubernetes.podspec-volumes-csi` (Disabled). */
  csi: boolean;
  /** `kubernetes.podspec-volumes-ephemeral` (Disabled). */
  ephemeral: boolean;
  /** `kubernetes.podspec-volumes-image` (Disabled). */
  imageVolumes: boolean;
  /** `kubernetes.podspec-volumes-mount-propagation` (Disabled). */
  mountPropagation: boolean;
  /** `kubernetes.podspec-fieldref` (Disabled): env valueFrom.fieldRef / resourceFieldRef. */
  fieldRef: boolean;
  /** `kubernetes.podspec-securitycontext` (Disabled): the pod-level securityContext. */
  securityContext: boolean;
  /** `secure-pod-defaults` (Disabled): AllowRootBounded and Enabled also default container security contexts. */
  securePodDefaults: SecurePodDefaults;
  /** `kubernetes.containerspec-addcapabilities` (Disabled). */
  addCapabilities: boolean;
  /** The pod-spec fields behind `kubernetes.podspec-<name>` flags (Disabled unless listed), by JSON field name. */
  podSpecFields: readonly string[];
}

/** Upstream Knative's config-features defaults. */
export const knativePodSpecFeatures: PodSpecFeatures = {
  multiContainer: true,
  multiContainerProbing: false,
  initContainers: false,
  emptyDir: true,
  persistentVolumeClaim: false,
  persistentVolumeWrite: false,
  hostPath: false,
  csi: false,
  ephemeral: false,
  imageVolumes: false,
  mountPropagation: false,
  fieldRef: false,
  securityContext: false,
  securePodDefaults: 'Disabled',
  addCapabilities: false,
  podSpecFields: [],
};

/** The `kubernetes.podspec-*` gated pod-spec fields (JSON names). */
export const gatedPodSpecFields = [
  'affinity',
  'topologySpreadConstraints',
  'hostAliases',
  'nodeSelector',
  'runtimeClassName',
  'tolerations',
  'shareProcessNamespace',
  'priorityClassName',
  'schedulerName',
  'dnsPolicy',
  'dnsConfig',
  'hostIPC',
  'hostPID',
  'hostNetwork',
] as const;

// Shapes of the core/v1 fields validation reads; serving.ts leaves them open.
type Obj = Record<string, unknown>;
interface IntOrString {
  port?: number | string;
}
interface Probe extends Obj {
  httpGet?: IntOrString & Obj;
  tcpSocket?: IntOrString & Obj;
  exec?: Obj;
  grpc?: Obj;
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  initialDelaySeconds?: number;
}
interface SecurityContext extends Obj {
  runAsUser?: number;
  runAsGroup?: number;
  fsGroup?: number;
  supplementalGroups?: number[];
  privileged?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
}
interface VolumeMount extends Obj {
  name?: string;
  mountPath?: string;
  readOnly?: boolean;
  mountPropagation?: string;
}
type Volume = Obj & { name?: string };
interface EnvFrom extends Obj {
  configMapRef?: Obj;
  secretRef?: Obj;
}
type ContainerFields = Container & {
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: SecurityContext;
  volumeMounts?: VolumeMount[];
  envFrom?: EnvFrom[];
  terminationMessagePolicy?: string;
  resources?: Obj;
};
type PodFields = RevisionSpec & {
  containers?: ContainerFields[];
  initContainers?: ContainerFields[];
  volumes?: Volume[];
  securityContext?: SecurityContext;
};
type ContainerKind = 'user' | 'sidecar' | 'init';
interface ServingPort {
  name: string;
  containerPort: number;
}

const maxInt32 = 2_147_483_647;
const reservedContainerNames = new Set(['queue-proxy']);
const reservedEnvVars = new Set(['PORT', 'K_SERVICE', 'K_CONFIGURATION', 'K_REVISION']);
/** queue-proxy's ports (8012 http, 8013 h2c, 8022 admin, 9090/9091 metrics) and the profiling port 8008. */
export const reservedPorts: ReadonlySet<number> = new Set([8012, 8013, 8022, 9090, 9091, 8008]);
const validPortNames = new Set(['', 'h2c', 'http1']);
const reservedMountPaths = new Set(['/', '/dev', '/dev/log']);

/** A Go field "set" in the sense of kmp.CompareSetFields: not absent and not its zero value. */
function isSet(v: unknown): boolean {
  return v !== undefined && v !== null && v !== false && v !== 0 && v !== '';
}

/** apis.CheckDisallowedFields: every set field of `obj` outside `allowed`, as one error (paths sorted by merge). */
function checkDisallowed(obj: Obj | undefined, allowed: ReadonlySet<string>, path: string): FieldError[] {
  const extra = Object.keys(obj ?? {})
    .filter((k) => !allowed.has(k) && isSet(obj?.[k]))
    .sort();
  return extra.length === 0 ? [] : [disallowed(...extra.map((k) => at(path, k)))];
}

const containerFields = new Set([
  'name',
  'args',
  'command',
  'env',
  'workingDir',
  'envFrom',
  'image',
  'imagePullPolicy',
  'livenessProbe',
  'ports',
  'readinessProbe',
  'resources',
  'securityContext',
  'startupProbe',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'volumeMounts',
]);
const probeFields = new Set([
  'httpGet',
  'tcpSocket',
  'exec',
  'grpc',
  'initialDelaySeconds',
  'timeoutSeconds',
  'periodSeconds',
  'successThreshold',
  'failureThreshold',
  'terminationGracePeriodSeconds',
]);
const revisionSpecFields = ['containerConcurrency', 'timeoutSeconds', 'responseStartTimeoutSeconds', 'idleTimeoutSeconds'];

function podSpecAllowed(spec: PodFields, f: PodSpecFeatures): Set<string> {
  const allowed = new Set([...revisionSpecFields, 'serviceAccountName', 'containers', 'volumes', 'imagePullSecrets', 'enableServiceLinks']);
  if (spec.automountServiceAccountToken === false) allowed.add('automountServiceAccountToken');
  for (const field of f.podSpecFields) allowed.add(field);
  if (f.securityContext || f.securePodDefaults !== 'Disabled') allowed.add('securityContext');
  if (f.initContainers) allowed.add('initContainers');
  return allowed;
}

/** A securityContext's user and group ids in [0, 2^31-1]. */
function validateIds(sc: SecurityContext, path: string, fields: readonly ('runAsUser' | 'runAsGroup' | 'fsGroup')[]): FieldError[] {
  const errs: FieldError[] = [];
  for (const field of fields) {
    const v = sc[field];
    if (v !== undefined && (v < 0 || v > maxInt32)) errs.push(outOfBounds(v, 0, maxInt32, at(path, field)));
  }
  return errs;
}

function validatePodSecurityContext(sc: SecurityContext | undefined, f: PodSpecFeatures, path: string): FieldError[] {
  if (sc == null) return [];
  const allowed = new Set<string>();
  if (f.securePodDefaults !== 'Disabled') allowed.add('seccompProfile');
  if (f.securityContext)
    for (const k of ['runAsUser', 'runAsGroup', 'runAsNonRoot', 'fsGroup', 'supplementalGroups', 'seccompProfile']) allowed.add(k);
  const errs = [...checkDisallowed(sc, allowed, path), ...validateIds(sc, path, ['runAsUser', 'runAsGroup', 'fsGroup'])];
  (sc.supplementalGroups ?? []).forEach((gid, i) => {
    if (gid < 0 || gid > maxInt32) errs.push(outOfBounds(gid, 0, maxInt32, at(path, `supplementalGroups[${i}]`)));
  });
  return errs;
}

function validateSecurityContext(sc: SecurityContext | undefined, f: PodSpecFeatures, path: string): FieldError[] {
  if (sc == null) return [];
  const allowed = new Set([
    'capabilities',
    'readOnlyRootFilesystem',
    'runAsUser',
    'runAsGroup',
    'runAsNonRoot',
    'allowPrivilegeEscalation',
    'seccompProfile',
  ]);
  if (sc.privileged === false) allowed.add('privileged');
  const errs = checkDisallowed(sc, allowed, path);
  const caps = sc.capabilities;
  if (caps != null) {
    const capsAllowed = new Set(['drop']);
    const onlyBind = caps.add?.length === 1 && caps.add[0] === 'NET_BIND_SERVICE';
    if (f.addCapabilities || (f.securePodDefaults !== 'Disabled' && onlyBind)) capsAllowed.add('add');
    errs.push(...checkDisallowed(caps, capsAllowed, at(path, 'capabilities')));
  }
  errs.push(...validateIds(sc, path, ['runAsUser', 'runAsGroup']));
  return errs;
}

// ---------------------------------------------------------------------------------------------------------------
// Volumes and mounts.

const sourceGates: readonly (readonly [string, keyof PodSpecFeatures | undefined, string])[] = [
  ['secret', undefined, ''],
  ['configMap', undefined, ''],
  ['projected', undefined, ''],
  ['emptyDir', 'emptyDir', 'EmptyDir'],
  ['persistentVolumeClaim', 'persistentVolumeClaim', ''],
  ['hostPath', 'hostPath', 'HostPath'],
  ['csi', 'csi', 'CSI'],
  ['ephemeral', 'ephemeral', 'Ephemeral'],
  ['image', 'imageVolumes', 'Image'],
];

function featureOn(f: PodSpecFeatures, gate: keyof PodSpecFeatures | undefined): boolean {
  return gate === undefined || f[gate] === true;
}

function validatePvc(v: Volume, f: PodSpecFeatures): FieldError[] {
  const pvc = v.persistentVolumeClaim as { claimName?: string; readOnly?: boolean } | undefined;
  if (pvc == null) return [];
  const errs: FieldError[] = [];
  const claim = pvc.claimName ?? '';
  if (!f.persistentVolumeClaim) errs.push(generic(`Persistent volume claim support is disabled, but found persistent volume claim ${claim}`));
  if (pvc.readOnly !== true && !f.persistentVolumeWrite) {
    errs.push(generic(`Persistent volume write support is disabled, but found persistent volume claim ${claim} that is not read-only`));
  }
  return errs;
}

function validateKeyToPaths(items: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  (Array.isArray(items) ? (items as Obj[]) : []).forEach((item, i) => {
    const p = at(path, `items[${i}]`);
    errs.push(...checkDisallowed(item, new Set(['key', 'path', 'mode']), p));
    if (!isSet(item.key)) errs.push(missing(at(p, 'key')));
    if (!isSet(item.path)) errs.push(missing(at(p, 'path')));
  });
  return errs;
}

function validateDownwardAPIFile(item: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const field = item.fieldRef != null;
  const resource = item.resourceFieldRef != null;
  if (!field && !resource) errs.push(missingOneOf(at(path, 'fieldRef'), at(path, 'resourceFieldRef')));
  if (field && resource) errs.push(generic('Within a single item, cannot set both', `${at(path, 'resourceFieldRef')}, ${at(path, 'fieldRef')}`));
  if (!isSet(item.path)) errs.push(missing(at(path, 'path')));
  return errs;
}

function validateProjection(proj: Obj, path: string): FieldError[] {
  const kinds = ['secret', 'configMap', 'serviceAccountToken', 'downwardAPI'];
  const specified = kinds.filter((k) => proj[k] != null);
  const errs: FieldError[] = [];
  for (const k of ['secret', 'configMap']) {
    const src = proj[k] as Obj | undefined;
    if (src == null) continue;
    if (!isSet(src.name)) errs.push(missing(at(path, `${k}.name`)));
    errs.push(...validateKeyToPaths(src.items, at(path, k)));
  }
  const token = proj.serviceAccountToken as Obj | undefined;
  if (token != null && !isSet(token.path)) errs.push(missing(at(path, 'serviceAccountToken.path')));
  const downward = proj.downwardAPI as { items?: Obj[] } | undefined;
  (downward?.items ?? []).forEach((item, i) => errs.push(...validateDownwardAPIFile(item, at(path, `downwardAPI.items[${i}]`))));
  if (specified.length === 0) errs.push(missingOneOf(...kinds.map((k) => at(path, k))));
  else if (specified.length > 1) errs.push(multipleOneOf(...specified.map((k) => at(path, k))));
  return errs;
}

function validateVolumeSource(v: Volume, f: PodSpecFeatures, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const specified = sourceGates.filter(([k]) => v[k] != null);
  // Upstream reports a secret's or configMap's items under the volume itself (`volumes[i].items[j]`).
  for (const k of ['secret', 'configMap'] as const) if (v[k] != null) errs.push(...validateKeyToPaths((v[k] as Obj).items, path));
  ((v.projected as { sources?: Obj[] } | undefined)?.sources ?? []).forEach((proj, i) =>
    errs.push(...validateProjection(proj, at(path, `projected[${i}]`))),
  );
  const emptyDir = v.emptyDir as { medium?: string; sizeLimit?: string | number } | undefined;
  if (emptyDir != null && !['', 'Memory'].includes(emptyDir.medium ?? '')) errs.push(invalid(emptyDir.medium, at(path, 'emptyDir.medium')));
  const sizeLimit = emptyDir?.sizeLimit;
  if (sizeLimit !== undefined && (typeof sizeLimit === 'number' ? sizeLimit < 0 : sizeLimit.startsWith('-'))) {
    errs.push(invalid(sizeLimit, at(path, 'emptyDir.sizeLimit')));
  }
  if (specified.length === 0) {
    errs.push(missingOneOf(...sourceGates.filter(([, gate]) => featureOn(f, gate)).map(([k]) => at(path, k))));
  } else if (specified.length > 1) {
    errs.push(multipleOneOf(...specified.map(([k]) => at(path, k))));
  }
  return errs;
}

function validateVolume(v: Volume, f: PodSpecFeatures, path: string): FieldError[] {
  const name = v.name ?? '';
  let errs = validatePvc(v, f);
  for (const [k, gate, label] of sourceGates) {
    if (label !== '' && v[k] != null && !featureOn(f, gate))
      errs.push(generic(`${label} volume support is disabled, but found ${label} volume ${name}`));
  }
  const known = new Set(['name', ...sourceGates.map(([k]) => k)]);
  const gatedOff = sourceGates.filter(([, gate]) => !featureOn(f, gate)).map(([k]) => k);
  errs.push(...checkDisallowed(v, new Set([...known].filter((k) => !gatedOff.includes(k))), path));
  // Upstream assigns (not appends) the name error, so it replaces what was found above.
  if (name === '') errs = [missing(at(path, 'name'))];
  else if (dns1123LabelErrors(name).length > 0) errs = [invalid(name, at(path, 'name'))];
  return [...errs, ...validateVolumeSource(v, f, path)];
}

function validateVolumes(
  volumes: readonly Volume[],
  mounted: ReadonlySet<string>,
  f: PodSpecFeatures,
  path: string,
): { errs: FieldError[]; byName: Map<string, Volume> } {
  const errs: FieldError[] = [];
  const byName = new Map<string, Volume>();
  volumes.forEach((v, i) => {
    const p = at(path, `[${i}]`);
    const name = v.name ?? '';
    if (byName.has(name)) errs.push({ path: at(p, 'name'), message: `duplicate volume name ${JSON.stringify(name)}` });
    if (!mounted.has(name)) errs.push({ path: at(p, 'name'), message: `volume with name ${JSON.stringify(name)} not mounted` });
    errs.push(...validateVolume(v, f, p));
    byName.set(name, v);
  });
  return { errs, byName };
}

function validateVolumeMount(
  m: VolumeMount,
  i: number,
  ctx: { volumes: ReadonlyMap<string, Volume>; seen: Set<string>; f: PodSpecFeatures; path: string },
): FieldError[] {
  const p = at(ctx.path, `[${i}]`);
  const allowed = new Set(['name', 'readOnly', 'mountPath', 'subPath']);
  if (ctx.f.mountPropagation) allowed.add('mountPropagation');
  const errs = checkDisallowed(m, allowed, p);
  const vol = ctx.volumes.get(m.name ?? '');
  if (vol === undefined) errs.push({ path: at(p, 'name'), message: 'volumeMount has no matching volume' });
  const mountPath = m.mountPath ?? '';
  const clean = cleanPath(mountPath);
  if (mountPath === '') errs.push(missing(at(p, 'mountPath')));
  else if (reservedMountPaths.has(clean)) errs.push({ path: at(p, 'mountPath'), message: `mountPath ${JSON.stringify(clean)} is a reserved path` });
  else if (!mountPath.startsWith('/')) errs.push(invalid(mountPath, at(p, 'mountPath')));
  else if (ctx.seen.has(clean)) errs.push(invalid(`${JSON.stringify(mountPath)} must be unique`, at(p, 'mountPath')));
  ctx.seen.add(clean);
  const writableType = vol?.emptyDir != null || vol?.persistentVolumeClaim != null || vol?.ephemeral != null;
  if (!writableType && m.readOnly !== true)
    errs.push({ path: at(p, 'readOnly'), message: 'volume mount should be readOnly for this type of volume' });
  if (isSet(m.mountPropagation)) {
    if (!ctx.f.mountPropagation)
      errs.push(generic(`Volume Mount Propagation support is disabled, but found volume mount ${m.name ?? ''} with mount propagation`));
    if (m.mountPropagation !== 'None' && m.mountPropagation !== 'HostToContainer') {
      errs.push({ path: at(p, 'mountPropagation'), message: 'mount propagation should be set to None or HostToContainer' });
    }
  }
  const pvc = vol?.persistentVolumeClaim as { readOnly?: boolean } | undefined;
  if (pvc?.readOnly === true && m.readOnly !== true) errs.push({ path: at(p, 'readOnly'), message: 'volume is readOnly but volume mount is not' });
  return errs;
}

// ---------------------------------------------------------------------------------------------------------------
// Probes.

/** validateProbe: one handler; on the user container a named port must be the serving port's name. */
function validateProbe(p: Probe | undefined, port: ServingPort | undefined, path: string): FieldError[] {
  if (p == null) return [];
  const errs = checkDisallowed(p, probeFields, path);
  const handlers: string[] = [];
  for (const h of ['httpGet', 'tcpSocket'] as const) {
    const action = p[h];
    if (action == null) continue;
    handlers.push(h);
    const v = action.port;
    const text = v === undefined ? '0' : String(v);
    if (port !== undefined) {
      if (typeof v === 'string' && v !== '' && v !== port.name)
        errs.push(invalid(text, at(path, `${h}.port`), 'Probe port must match container port'));
    } else if (v === undefined || v === '' || v === 0) {
      errs.push(invalid(text, at(path, `${h}.port`), 'Probe port must be specified'));
    }
  }
  if (p.exec != null) handlers.push('exec');
  if (p.grpc != null) handlers.push('gRPC');
  if (handlers.length === 0) errs.push(missingOneOf(...['httpGet', 'tcpSocket', 'exec', 'grpc'].map((h) => at(path, h))));
  else if (handlers.length > 1) errs.push(multipleOneOf(...handlers.map((h) => at(path, h))));
  return errs;
}

function validateReadinessProbe(p: Probe | undefined, port: ServingPort | undefined, path: string): FieldError[] {
  if (p == null) return [];
  const errs = validateProbe(p, port, path);
  const period = p.periodSeconds ?? 0;
  const timeout = p.timeoutSeconds ?? 0;
  const failure = p.failureThreshold ?? 0;
  const success = p.successThreshold ?? 0;
  const initialDelay = p.initialDelaySeconds ?? 0;
  if (period < 0) errs.push(outOfBounds(period, 0, maxInt32, at(path, 'periodSeconds')));
  if (initialDelay < 0) errs.push(outOfBounds(initialDelay, 0, maxInt32, at(path, 'initialDelaySeconds')));
  if (success < 1) errs.push(outOfBounds(success, 1, maxInt32, at(path, 'successThreshold')));
  if (period === 0) {
    // periodSeconds 0 selects Knative's aggressive probing, which ignores these.
    if (failure !== 0) errs.push({ path: at(path, 'failureThreshold'), message: 'failureThreshold is disallowed when periodSeconds is zero' });
    if (timeout !== 0) errs.push({ path: at(path, 'timeoutSeconds'), message: 'timeoutSeconds is disallowed when periodSeconds is zero' });
  } else {
    if (timeout < 1) errs.push(outOfBounds(timeout, 1, maxInt32, at(path, 'timeoutSeconds')));
    if (failure < 1) errs.push(outOfBounds(failure, 1, maxInt32, at(path, 'failureThreshold')));
  }
  return errs;
}

/** A sidecar's probes: validated only with multi-container-probing, else every set field is disallowed. */
function validateSidecarProbes(c: ContainerFields, f: PodSpecFeatures, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const name of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
    const p = c[name];
    if (p == null) continue;
    const pp = at(path, name);
    if (f.multiContainerProbing) {
      errs.push(...(name === 'readinessProbe' ? validateReadinessProbe(p, undefined, pp) : validateProbe(p, undefined, pp)));
      continue;
    }
    // The handler is an inlined struct: kmp names it "", i.e. the probe itself.
    const fields = Object.keys(p).filter((k) => isSet(p[k]));
    const paths = [...new Set(fields.map((k) => (['httpGet', 'tcpSocket', 'exec', 'grpc'].includes(k) ? pp : at(pp, k))))].sort();
    if (paths.length > 0) errs.push(disallowed(...paths));
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------------------------
// Containers.

function validateEnv(c: ContainerFields, kind: ContainerKind, f: PodSpecFeatures, path: string): FieldError[] {
  const errs: FieldError[] = [];
  (c.env ?? []).forEach((e, j) => {
    const p = at(path, `env[${j}]`);
    errs.push(...checkDisallowed(e as unknown as Obj, new Set(['name', 'value', 'valueFrom']), p));
    // PORT is reserved only in the user container, where queue-proxy sets it.
    const reserved = reservedEnvVars.has(e.name) && (kind === 'user' || e.name !== 'PORT');
    if ((e.name ?? '') === '') errs.push(missing(at(p, 'name')));
    else if (reserved) errs.push({ path: at(p, 'name'), message: `${JSON.stringify(e.name)} is a reserved environment variable` });
    const sourceAllowed = new Set(['configMapKeyRef', 'secretKeyRef', ...(f.fieldRef ? ['fieldRef', 'resourceFieldRef'] : [])]);
    if (e.valueFrom != null) errs.push(...checkDisallowed(e.valueFrom as Obj, sourceAllowed, at(p, 'valueFrom')));
  });
  (c.envFrom ?? []).forEach((e, j) => {
    const p = at(path, `envFrom[${j}]`);
    errs.push(...checkDisallowed(e, new Set(['prefix', 'configMapRef', 'secretRef']), p));
    if (e.configMapRef != null && e.secretRef != null) errs.push(multipleOneOf(at(path, 'envFrom.configMapRef'), at(path, 'envFrom.secretRef')));
    else if (e.configMapRef == null && e.secretRef == null) errs.push(missingOneOf(at(path, 'envFrom.configMapRef'), at(path, 'envFrom.secretRef')));
  });
  return errs;
}

function validatePortBasics(port: Obj & { containerPort?: number }, path: string): FieldError[] {
  const errs = checkDisallowed(port, new Set(['containerPort', 'name', 'protocol']), path);
  const n = port.containerPort ?? 0;
  if (reservedPorts.has(n))
    errs.push(invalid(`${n} is a reserved port`, at(path, 'containerPort'), `${n} is a reserved port, please use a different value`));
  if (n < 0 || n > 65535) errs.push(outOfBounds(n, 0, 65535, at(path, 'containerPort')));
  return errs;
}

/** The ports of a container: only the first counts (and is checked) outside init containers; paths name no index. */
function validatePorts(c: ContainerFields, kind: ContainerKind, path: string): FieldError[] {
  const ports = (c.ports ?? []) as (Obj & { containerPort?: number; name?: string; protocol?: string })[];
  const p = at(path, 'ports');
  if (kind === 'init') return ports.flatMap((port) => validatePortBasics(port, p));
  const first = ports[0];
  if (first === undefined) return [];
  const errs = validatePortBasics(first, p);
  if ((first.protocol ?? '') !== '' && first.protocol !== 'TCP') errs.push(invalid(first.protocol, at(p, 'protocol')));
  if (!validPortNames.has(first.name ?? '')) {
    errs.push({ path: p, message: `Port name ${first.name ?? ''} is not allowed`, details: "Name must be empty, or one of: 'h2c', 'http1'" });
  }
  return errs;
}

const quantityMessage = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/**
 * Resource quantities: upstream cannot even decode a request with a bad one (its defaulting webhook answers
 * "cannot decode incoming new object: <this message>"); here it is reported on the quantity's path.
 */
function validateQuantities(resources: Obj | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const side of ['limits', 'requests'] as const) {
    const list = resources?.[side];
    if (list === null || typeof list !== 'object') continue;
    for (const [name, q] of Object.entries(list as Obj)) {
      const ok = typeof q === 'number' || (typeof q === 'string' && isQuantity(q));
      if (!ok) errs.push(generic(quantityMessage, at(path, `${side}.${name}`)));
    }
  }
  return errs;
}

/** The `validate` every container goes through (init containers with their own port rule). */
function validateContainerCommon(c: ContainerFields, kind: ContainerKind, ctx: PodContext, path: string): FieldError[] {
  if (Object.keys(c).length === 0) return [missing(path)];
  const errs = checkDisallowed(c, containerFields, path);
  const name = c.name ?? '';
  if (reservedContainerNames.has(name)) errs.push({ path: at(path, 'name'), message: `${JSON.stringify(name)} is a reserved container name` });
  errs.push(...validateEnv(c, kind, ctx.f, path));
  if ((c.image ?? '') === '') errs.push(missing(at(path, 'image')));
  else if (!isImageReference(c.image)) {
    errs.push({
      path: at(path, 'image'),
      message: 'Failed to parse image reference',
      details: `image: ${JSON.stringify(c.image)}, error: could not parse reference: ${c.image}`,
    });
  }
  errs.push(...validatePorts(c, kind, path));
  errs.push(
    ...checkDisallowed(c.resources, new Set(['limits', 'requests']), at(path, 'resources')),
    ...validateQuantities(c.resources, at(path, 'resources')),
  );
  errs.push(...validateSecurityContext(c.securityContext, ctx.f, at(path, 'securityContext')));
  const policy = c.terminationMessagePolicy ?? '';
  if (!['', 'File', 'FallbackToLogsOnError'].includes(policy)) errs.push(invalid(policy, at(path, 'terminationMessagePolicy')));
  const seen = new Set<string>();
  (c.volumeMounts ?? []).forEach((m, i) =>
    errs.push(...validateVolumeMount(m, i, { volumes: ctx.volumes, seen, f: ctx.f, path: at(path, 'volumeMounts') })),
  );
  return errs;
}

interface PodContext {
  f: PodSpecFeatures;
  volumes: ReadonlyMap<string, Volume>;
  port: ServingPort;
}

function validateUserContainer(c: ContainerFields, ctx: PodContext, path: string): FieldError[] {
  return [
    ...validateProbe(c.livenessProbe, ctx.port, at(path, 'livenessProbe')),
    ...validateReadinessProbe(c.readinessProbe, ctx.port, at(path, 'readinessProbe')),
    ...validateProbe(c.startupProbe, ctx.port, at(path, 'startupProbe')),
    ...validateContainerCommon(c, 'user', ctx, path),
  ];
}

function validateInitContainer(c: ContainerFields, ctx: PodContext, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const field of ['livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle'] as const) {
    if (c[field] != null) errs.push({ path: at(path, field), message: 'field not allowed in an init container' });
  }
  return [...errs, ...validateContainerCommon(c, 'init', ctx, path)];
}

/** A list of containers; a duplicate name re-prefixes everything found so far with `containers[i]`, as upstream. */
function validateContainerList(
  containers: readonly ContainerFields[],
  taken: Set<string>,
  check: (c: ContainerFields, path: string) => FieldError[],
  opts: { remember: boolean },
): FieldError[] {
  let errs: FieldError[] = [];
  containers.forEach((c, i) => {
    const name = c.name ?? '';
    if (taken.has(name)) {
      errs = via(`containers[${i}]`, [...errs, { path: 'name', message: `duplicate container name ${JSON.stringify(name)}` }]);
    } else if (opts.remember) taken.add(name);
    errs.push(...check(c, `containers[${i}]`));
  });
  return errs;
}

/** validateContainersPorts: the serving port (name "http" and 8080 when unset) and the one-port rule. */
function servingPort(containers: readonly ContainerFields[]): { port: ServingPort; errs: FieldError[] } {
  let count = 0;
  let port: { name?: string; containerPort?: number } = {};
  for (const c of containers) {
    const ports = c.ports ?? [];
    if (ports.length > 0) {
      count += ports.length;
      port = ports[0] ?? {};
    }
  }
  const serving = { name: (port.name ?? '') === '' ? 'http' : (port.name ?? ''), containerPort: port.containerPort || 8080 };
  if (count === 0 && containers.length > 1) return { port: serving, errs: [missing('containers[*].ports')] };
  if (count > 1) {
    return {
      port: serving,
      errs: [
        {
          path: 'containers[*].ports',
          message: 'more than one container port is set',
          details: 'Only a single port is allowed across all containers',
        },
      ],
    };
  }
  return { port: serving, errs: [] };
}

function validateInitContainers(spec: PodFields, ctx: PodContext): FieldError[] {
  const init = spec.initContainers ?? [];
  if (init.length === 0) return [];
  if (!ctx.f.initContainers) return [generic(`pod spec support for init-containers is off, but found ${init.length} init containers`)];
  const taken = new Set((spec.containers ?? []).map((c) => c.name ?? ''));
  // Upstream reports init containers under `containers[i]`.
  return validateContainerList(init, taken, (c, p) => validateInitContainer(c, ctx, p), { remember: false });
}

function validateContainers(containers: readonly ContainerFields[], ctx: PodContext): FieldError[] {
  if (containers.length === 0) return [missing('containers')];
  if (containers.length === 1) return validateUserContainer(containers[0] as ContainerFields, ctx, 'containers[0]');
  if (!ctx.f.multiContainer) return [generic(`multi-container is off, but found ${containers.length} containers`)];
  return validateContainerList(
    containers,
    new Set(),
    (c, p) =>
      (c.ports?.length ?? 0) === 0
        ? [...validateSidecarProbes(c, ctx.f, p), ...validateContainerCommon(c, 'sidecar', ctx, p)]
        : validateUserContainer(c, ctx, p),
    { remember: true },
  );
}

/**
 * ValidatePodSpec: field masks, the pod securityContext, volumes, init containers, the containers (one serving port),
 * the service account name. `path` is where the spec sits (e.g. "spec.template.spec").
 */
export function validatePodSpec(spec: RevisionSpec, path: string, features: PodSpecFeatures): FieldError[] {
  const ps = spec as PodFields;
  const f = features;
  const containers = ps.containers ?? [];
  const all = [...(ps.initContainers ?? []), ...containers];
  const mounted = new Set(all.flatMap((c) => (c.volumeMounts ?? []).map((m) => m.name ?? '')));
  const errs = [...checkDisallowed(ps, podSpecAllowed(ps, f), ''), ...validatePodSecurityContext(ps.securityContext, f, 'securityContext')];
  const { errs: volumeErrs, byName } = validateVolumes(ps.volumes ?? [], mounted, f, 'volumes');
  errs.push(...volumeErrs);
  const { port, errs: portErrs } = servingPort(containers);
  const ctx: PodContext = { f, volumes: byName, port };
  errs.push(...validateInitContainers(ps, ctx), ...portErrs, ...validateContainers(containers, ctx));
  const sa = ps.serviceAccountName ?? '';
  if (sa !== '') for (const msg of dns1123SubdomainErrors(sa)) errs.push(invalid(sa, 'serviceAccountName', msg));
  return via(path, errs);
}
