// config-features (Knative's pkg/apis/config/features.go): the flags that gate pod-spec fields in validation and
// secure-pod-defaults in defaulting. Knative's parser never fails: a value that is not Enabled, Allowed or Disabled
// (any case) leaves the default. Allowed counts as on here (the field masks accept it; the per-object opt-in
// annotation that Allowed asks for is not checked). Pure.
import { knativePodSpecFeatures, type PodSpecFeatures, type SecurePodDefaults } from '../validation-podspec.js';
import type { Parsed } from './types.js';

export const FeaturesConfigName = 'config-features';

type BooleanFeature = Exclude<keyof PodSpecFeatures, 'securePodDefaults' | 'podSpecFields'>;

const flags: Readonly<Record<string, BooleanFeature>> = {
  'multi-container': 'multiContainer',
  'multi-container-probing': 'multiContainerProbing',
  'kubernetes.podspec-init-containers': 'initContainers',
  'kubernetes.podspec-volumes-emptydir': 'emptyDir',
  'kubernetes.podspec-persistent-volume-claim': 'persistentVolumeClaim',
  'kubernetes.podspec-persistent-volume-write': 'persistentVolumeWrite',
  'kubernetes.podspec-volumes-hostpath': 'hostPath',
  'kubernetes.podspec-volumes-csi': 'csi',
  'kubernetes.podspec-volumes-ephemeral': 'ephemeral',
  'kubernetes.podspec-volumes-image': 'imageVolumes',
  'kubernetes.podspec-volumes-mount-propagation': 'mountPropagation',
  'kubernetes.podspec-fieldref': 'fieldRef',
  'kubernetes.podspec-securitycontext': 'securityContext',
  'kubernetes.containerspec-addcapabilities': 'addCapabilities',
};

/** The `kubernetes.podspec-<name>` flags that gate one pod-spec field, by the field's JSON name. */
const podSpecFieldFlags: Readonly<Record<string, string>> = {
  affinity: 'kubernetes.podspec-affinity',
  topologySpreadConstraints: 'kubernetes.podspec-topologyspreadconstraints',
  hostAliases: 'kubernetes.podspec-hostaliases',
  nodeSelector: 'kubernetes.podspec-nodeselector',
  runtimeClassName: 'kubernetes.podspec-runtimeclassname',
  tolerations: 'kubernetes.podspec-tolerations',
  shareProcessNamespace: 'kubernetes.podspec-shareprocessnamespace',
  priorityClassName: 'kubernetes.podspec-priorityclassname',
  schedulerName: 'kubernetes.podspec-schedulername',
  dnsPolicy: 'kubernetes.podspec-dnspolicy',
  dnsConfig: 'kubernetes.podspec-dnsconfig',
  hostIPC: 'kubernetes.podspec-hostipc',
  hostPID: 'kubernetes.podspec-hostpid',
  hostNetwork: 'kubernetes.podspec-hostnetwork',
};

/** asFlag: true for Enabled or Allowed, false for Disabled, undefined (keep the default) for anything else. */
function flag(raw: string | undefined): boolean | undefined {
  const v = raw?.toLowerCase();
  return v === 'enabled' || v === 'allowed' ? true : v === 'disabled' ? false : undefined;
}

function securePodDefaults(raw: string | undefined): SecurePodDefaults | undefined {
  const v = raw?.toLowerCase();
  return v === 'enabled' ? 'Enabled' : v === 'allowrootbounded' ? 'AllowRootBounded' : v === 'disabled' ? 'Disabled' : undefined;
}

/** Parses config-features' data over Knative's defaults (never fails, as upstream). */
export function parseFeaturesConfig(data: Readonly<Record<string, string>>): Parsed<PodSpecFeatures> {
  const out: PodSpecFeatures = { ...knativePodSpecFeatures };
  for (const [key, feature] of Object.entries(flags)) out[feature] = flag(data[key]) ?? out[feature];
  out.podSpecFields = Object.entries(podSpecFieldFlags)
    .filter(([, key]) => flag(data[key]) === true)
    .map(([field]) => field);
  out.securePodDefaults = securePodDefaults(data['secure-pod-defaults']) ?? out.securePodDefaults;
  return { ok: true, value: out };
}

/** config-features as the controller holds it: the pod-spec gates and secure-pod-defaults, and the routing flags. */
export interface FeaturesConfig {
  podSpec: PodSpecFeatures;
  /** `tag-header-based-routing` (Disabled): a request with `Knative-Serving-Tag: <tag>` goes to that tag's target. */
  tagHeaderBasedRouting: boolean;
}

/** Knative's defaults: every gate as upstream ships it, secure-pod-defaults and tag-header-based-routing Disabled. */
export function defaultFeaturesConfig(): FeaturesConfig {
  return { podSpec: { ...knativePodSpecFeatures }, tagHeaderBasedRouting: false };
}

/** Parses config-features' data (never fails, as upstream). */
export function parseFeatures(data: Readonly<Record<string, string>>): Parsed<FeaturesConfig> {
  const podSpec = parseFeaturesConfig(data);
  if (!podSpec.ok) return podSpec;
  return { ok: true, value: { podSpec: podSpec.value, tagHeaderBasedRouting: flag(data['tag-header-based-routing']) ?? false } };
}
