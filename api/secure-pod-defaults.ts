// config-features `secure-pod-defaults` as Knative's RevisionSpec.SetDefaults applies it (defaultSecurityContext in
// pkg/apis/serving/v1/revision_defaults.go): with AllowRootBounded or Enabled, every container gets
// allowPrivilegeEscalation false, the RuntimeDefault seccomp profile unless the pod sets one, and — when it sets no
// capabilities — drops ALL (adding NET_BIND_SERVICE for a port below 1024); Enabled also sets runAsNonRoot unless
// the pod or container decides it. Pure; mutates the container it is given (a copy the caller owns).
import type { SecurePodDefaults } from './validation-podspec.js';

type Obj = Record<string, unknown>;
interface SecurityContext extends Obj {
  allowPrivilegeEscalation?: boolean;
  seccompProfile?: { type?: string };
  capabilities?: { add?: string[]; drop?: string[] };
  runAsNonRoot?: boolean;
}
interface PodSecurityContext extends Obj {
  seccompProfile?: { type?: string };
  runAsNonRoot?: boolean;
}
interface ContainerLike {
  ports?: { containerPort?: number }[];
  securityContext?: SecurityContext;
  [field: string]: unknown;
}

/** Applies secure-pod-defaults to `container` (a container or init container of a pod with `pod` as its context). */
export function applySecurePodDefaults(container: ContainerLike, pod: PodSecurityContext | undefined, mode: SecurePodDefaults): void {
  if (mode === 'Disabled') return;
  const psc = pod ?? {};
  const sc: SecurityContext = { ...container.securityContext };
  if (sc.allowPrivilegeEscalation === undefined) sc.allowPrivilegeEscalation = false;
  if ((psc.seccompProfile?.type ?? '') === '') {
    const profile = { ...sc.seccompProfile };
    if ((profile.type ?? '') === '') profile.type = 'RuntimeDefault';
    sc.seccompProfile = profile;
  }
  if (sc.capabilities === undefined) {
    const lowPort = (container.ports ?? []).some((p) => (p.containerPort ?? 0) < 1024);
    sc.capabilities = lowPort ? { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } : { drop: ['ALL'] };
  }
  if (mode === 'Enabled' && psc.runAsNonRoot === undefined && sc.runAsNonRoot === undefined) sc.runAsNonRoot = true;
  container.securityContext = sc;
}
