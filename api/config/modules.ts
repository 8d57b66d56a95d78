// config-modules (Tidal's, ADR 0009): the modules a template may name with `tidal.dev/module`.
// One key per module — the key is the module's name, the value says what serves it (free text, usually the
// operator's name); `_example` is not a module. The built-in module `knative` (Tidal itself) is always known and
// may not be listed. Pure.
import { dns1123LabelErrors } from '../k8s-names.js';
import type { Parsed } from './types.js';

export const ModulesConfigName = 'config-modules';

/** The module Tidal itself implements: a template without `tidal.dev/module`, or naming this, is Tidal's. */
export const BuiltinModule = 'knative';

/** config-modules, parsed. */
export interface ModulesConfig {
  /** The foreign modules a template may name, sorted; each is served by its own operator. */
  known: string[];
}

export function defaultModulesConfig(): ModulesConfig {
  return { known: [] };
}

/**
 * Parses config-modules: every key but `_example` must be a DNS-1123 label (a module name) other than the built-in
 * `knative`. The first bad key is the error, as the other config parsers report one.
 */
export function parseModulesConfig(data: Readonly<Record<string, string>>): Parsed<ModulesConfig> {
  const known: string[] = [];
  for (const key of Object.keys(data).sort()) {
    if (key === '_example') continue;
    const msgs = dns1123LabelErrors(key);
    const reason =
      msgs.length > 0
        ? `module name must be a DNS-1123 label: ${msgs.join(', ')}`
        : key === BuiltinModule
          ? `"${BuiltinModule}" is the built-in module; it is always known and may not be listed`
          : undefined;
    if (reason !== undefined) return { ok: false, error: `${ModulesConfigName}: ${key}: ${reason}`, key, reason };
    known.push(key);
  }
  return { ok: true, value: { known } };
}
