// config-logging: upstream's level rule and message, how a component's level is chosen, and the shipped file.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateConfigMapForAdmission } from '../../../api/admission.js';
import { parseLoggingConfig, pinoLevelFor, type LoggingConfig } from '../../../api/config/logging.js';
import { shippedConfigData } from '../../fixtures/shipped-config.js';

const parsed = (data: Record<string, string>): LoggingConfig => {
  const p = parseLoggingConfig(data);
  if (!p.ok) throw new Error(p.error);
  return p.value;
};

describe('config-logging', () => {
  it('reads loglevel.<component> in either case, skipping empty values, and keeps zap-logger-config as written', () => {
    expect(parsed({ 'loglevel.controller': 'DEBUG', 'loglevel.webhook': 'warn', 'loglevel.autoscaler': '', 'zap-logger-config': '{}' })).toEqual({
      zapLoggerConfig: '{}',
      levels: { controller: 'debug', webhook: 'warn' },
    });
  });

  it("refuses a level zap does not know, with the key and upstream's message", () => {
    expect(validateConfigMapForAdmission('config-logging', { 'loglevel.webhook': 'verbose' })).toEqual([
      { path: 'loglevel.webhook', message: 'invalid logging level: verbose' },
    ]);
    expect(validateConfigMapForAdmission('config-logging', { 'loglevel.controller': 'Debug' })).toEqual([
      { path: 'loglevel.controller', message: 'invalid logging level: Debug' },
    ]);
  });

  it("picks the component's level, else zap-logger-config's, else the start-up level; a broken zap JSON keeps the current one", () => {
    const both = parsed({ 'loglevel.webhook': 'dpanic', 'zap-logger-config': '{"level": "warn"}' });
    expect(pinoLevelFor(both, 'webhook', 'info')).toBe('error');
    expect(pinoLevelFor(both, 'controller', 'info')).toBe('warn');
    expect(pinoLevelFor(parsed({ 'zap-logger-config': '{"encoding": "json"}' }), 'controller', 'debug')).toBe('info');
    expect(pinoLevelFor(parsed({}), 'controller', 'debug')).toBe('debug');
    expect(pinoLevelFor(parsed({ 'zap-logger-config': '{' }), 'controller', 'debug')).toBeUndefined();
    expect(pinoLevelFor(parsed({ 'loglevel.controller': 'panic' }), 'controller', 'info')).toBe('fatal');
  });

  it('the shipped file sets nothing and its _example parses', () => {
    const data = shippedConfigData('config-logging');
    expect(Object.keys(data)).toEqual(['_example']);
    expect(parsed(parse(data._example ?? '') as Record<string, string>).levels).toEqual({ controller: 'info', webhook: 'info' });
  });
});
