// Modules (ADR 0009): a template names the module that turns its Revisions into pods with
// `tidal.dev/module` and gives it an opaque JSON object with `tidal.dev/module-config`. Both are template
// annotations, so they reach the Revision unchanged and a change makes a new Revision. A Revision of any module
// but the built-in `knative` gets no Deployment, HPA or PodDisruptionBudget from Tidal: its module's operator makes
// them and writes its ResourcesAvailable and ContainerHealthy. Pure.
import { BuiltinModule, type ModulesConfig } from './config/modules.js';
import { at, generic, type FieldError } from './field-error.js';
import { dns1123LabelErrors } from './k8s-names.js';

export { BuiltinModule } from './config/modules.js';

export const ModuleAnnotations = {
  /** The module's name: `knative` (or absent) is Tidal's own; any other must be listed in config-modules. */
  module: 'tidal.dev/module',
  /** The module's configuration: a JSON object, passed unchanged to the Revision; Tidal never reads inside it. */
  config: 'tidal.dev/module-config',
} as const;

/** Reason of the placeholder conditions a foreign Revision carries until its module's operator writes them. */
export const ReasonAwaitingModule = 'AwaitingModule';
/** Reason Tidal gives a foreign Revision whose module annotations are invalid (one stored bypassing the webhook). */
export const ReasonInvalidModule = 'InvalidModule';

type Annotated = { metadata?: { annotations?: Readonly<Record<string, string>> } };

/** The module named by an object's (a Revision's or a template's) annotations: `knative` when none is named. */
export function moduleOf(obj: Annotated | undefined): string {
  const name = obj?.metadata?.annotations?.[ModuleAnnotations.module];
  return name === undefined || name === '' ? BuiltinModule : name;
}

/** True when the object names a module other than Tidal's own: its pods are another operator's job. */
export function isForeignModule(obj: Annotated | undefined): boolean {
  return moduleOf(obj) !== BuiltinModule;
}

/** Why a module-config value is not a JSON object ('' when it is). */
export function moduleConfigProblem(raw: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    return `must be a JSON object: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    const what = parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : `a ${typeof parsed}`;
    return `must be a JSON object, not ${what}`;
  }
  return '';
}

/** The known modules as the error message lists them. */
export function describeKnownModules(modules: ModulesConfig | undefined): string {
  const known = modules?.known ?? [];
  return known.length > 0 ? `known modules: ${known.join(', ')}` : 'no modules are known (config-modules lists none)';
}

/**
 * The shape of the module annotations under `path` (the annotations' path): a name that is a DNS-1123 label, a
 * config that is a JSON object, and no config without a foreign module (a misspelt module key would otherwise leave
 * the config silently unused). Whether the module is *known* is {@link validateModuleKnown}'s.
 */
export function validateModuleShape(anns: Readonly<Record<string, string>> | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = anns?.[ModuleAnnotations.module];
  const config = anns?.[ModuleAnnotations.config];
  if (name !== undefined) {
    const msgs = name === '' ? ['must not be empty'] : dns1123LabelErrors(name);
    if (msgs.length > 0) errs.push(generic(`invalid module name ${JSON.stringify(name)}: ${msgs.join(', ')}`, at(path, ModuleAnnotations.module)));
  }
  if (config !== undefined) {
    const problem = moduleConfigProblem(config);
    if (problem !== '') errs.push(generic(`invalid module configuration: ${problem}`, at(path, ModuleAnnotations.config)));
    else if (name === undefined || name === BuiltinModule) {
      errs.push(
        generic(
          `a module configuration needs a module: set ${ModuleAnnotations.module} to a module other than the built-in "${BuiltinModule}"`,
          at(path, ModuleAnnotations.config),
        ),
      );
    }
  }
  return errs;
}

/** A foreign module must be listed in config-modules: `unknown module "statefull"; known modules: stateful`. */
export function validateModuleKnown(
  anns: Readonly<Record<string, string>> | undefined,
  modules: ModulesConfig | undefined,
  path: string,
): FieldError[] {
  const name = anns?.[ModuleAnnotations.module];
  if (name === undefined || name === '' || name === BuiltinModule || dns1123LabelErrors(name).length > 0) return [];
  if ((modules?.known ?? []).includes(name)) return [];
  return [generic(`unknown module ${JSON.stringify(name)}; ${describeKnownModules(modules)}`, at(path, ModuleAnnotations.module))];
}

/** A Revision's module and its configuration never change: that would hand running pods from one operator to another. */
export function validateModuleImmutable(
  anns: Readonly<Record<string, string>> | undefined,
  previous: Readonly<Record<string, string>> | undefined,
  path: string,
): FieldError[] {
  return [ModuleAnnotations.module, ModuleAnnotations.config]
    .filter((k) => (anns?.[k] ?? '') !== (previous?.[k] ?? ''))
    .map((k) => generic('annotation value is immutable', at(path, k)));
}

/** Why a Revision's module annotations are invalid for the controller ('' when they are fine): see ADR 0009. */
export function invalidModuleMessage(obj: Annotated): string {
  const errs = validateModuleShape(obj.metadata?.annotations, 'metadata.annotations');
  return errs.map((e) => `${e.message}: ${e.path}`).join('; ');
}
