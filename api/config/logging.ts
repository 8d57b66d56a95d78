// config-logging (knative/pkg logging/config.go): `zap-logger-config`, the JSON zap configuration whose `level` is
// every component's, and `loglevel.<component>` overrides. Tidal's components are `controller` and `webhook` (one
// process runs both); zap's levels map onto pino's. A level zap does not know is refused with upstream's message;
// the zap JSON is not checked at admission (upstream's parser does not either: a logger that cannot read it keeps its
// level). Pure.
import { ConfigKeyError, runParser } from './deployment.js';
import type { Parsed } from './types.js';

export const LoggingConfigName = 'config-logging';
export const ZapLoggerConfigKey = 'zap-logger-config';

/** zap's levels (zapcore.Level.UnmarshalText of knative/pkg's zap: lower or upper case). */
export type ZapLevel = 'debug' | 'info' | 'warn' | 'error' | 'dpanic' | 'panic' | 'fatal';
const zapLevels: readonly ZapLevel[] = ['debug', 'info', 'warn', 'error', 'dpanic', 'panic', 'fatal'];

/** pino's levels for zap's: dpanic logs as error, panic (which zap raises after logging) as fatal. */
export type PinoLevel = 'debug' | 'info' | 'warn' | 'error' | 'fatal';
const pinoOf: Readonly<Record<ZapLevel, PinoLevel>> = {
  debug: 'debug',
  info: 'info',
  warn: 'warn',
  error: 'error',
  dpanic: 'error',
  panic: 'fatal',
  fatal: 'fatal',
};

export interface LoggingConfig {
  /** `zap-logger-config` as written (undefined when absent). */
  zapLoggerConfig: string | undefined;
  /** `loglevel.<component>`, by component (empty values are skipped, as upstream). */
  levels: Readonly<Record<string, ZapLevel>>;
}

export function defaultLoggingConfig(): LoggingConfig {
  return { zapLoggerConfig: undefined, levels: {} };
}

function zapLevel(raw: string): ZapLevel | undefined {
  const known = zapLevels.find((l) => l === raw || l.toUpperCase() === raw);
  return known ?? (raw === '' ? 'info' : undefined);
}

/** Parses config-logging's data with upstream's rule: every non-empty `loglevel.*` value must be a zap level. */
export function parseLoggingConfig(data: Readonly<Record<string, string>>): Parsed<LoggingConfig> {
  return runParser(LoggingConfigName, () => {
    const levels: Record<string, ZapLevel> = {};
    for (const key of Object.keys(data).sort()) {
      const component = key.startsWith('loglevel.') ? key.slice('loglevel.'.length) : '';
      const raw = data[key] ?? '';
      if (component === '' || raw === '') continue;
      const level = zapLevel(raw);
      if (level === undefined) throw new ConfigKeyError(key, `invalid logging level: ${raw}`);
      levels[component] = level;
    }
    return { zapLoggerConfig: data[ZapLoggerConfigKey], levels };
  });
}

/**
 * The pino level of `component`: its `loglevel.<component>`, else the `level` of `zap-logger-config` (info when the
 * JSON has none, as zap's default config), else `fallback` (the process's start-up level) when the map sets neither.
 * Undefined when the zap JSON does not parse or names no level zap knows: the logger keeps its level, as upstream's.
 */
export function pinoLevelFor(cfg: LoggingConfig, component: string, fallback: string): string | undefined {
  const own = cfg.levels[component];
  if (own !== undefined) return pinoOf[own];
  if (cfg.zapLoggerConfig === undefined) return fallback;
  if (cfg.zapLoggerConfig.trim() === '') return 'info';
  try {
    const parsed = JSON.parse(cfg.zapLoggerConfig) as { level?: unknown };
    if (parsed.level === undefined) return 'info';
    const level = typeof parsed.level === 'string' ? zapLevel(parsed.level) : undefined;
    return level !== undefined ? pinoOf[level] : undefined;
  } catch {
    return undefined;
  }
}
