// config-logging applied live to the controller process's loggers: the root, its children, the webhook's own.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { parseLoggingConfig, type LoggingConfig } from '../../../api/config/logging.js';
import { LiveLogLevels } from '../../../workers/log-levels.js';

const parsed = (data: Record<string, string>): LoggingConfig => {
  const p = parseLoggingConfig(data);
  if (!p.ok) throw new Error(p.error);
  return p.value;
};

describe('LiveLogLevels', () => {
  it('applies live: the root logger and its children take the controller level, the webhook logger its own', () => {
    const levels = new LiveLogLevels('info');
    const root = pino({ level: 'info', onChild: (c) => levels.track(c) }, { write: () => undefined });
    levels.track(root);
    const worker = root.child({ component: 'worker' });
    const webhook = root.child({ component: 'webhook' });
    levels.apply(parsed({ 'loglevel.controller': 'debug', 'loglevel.webhook': 'error' }));
    expect([root.level, worker.level, webhook.level]).toEqual(['debug', 'debug', 'error']);
    // A child made afterwards takes the config in force; a later change reaches every logger.
    const late = root.child({ component: 'health' });
    expect(late.level).toBe('debug');
    levels.apply(parsed({}));
    expect([root.level, worker.level, webhook.level, late.level]).toEqual(['info', 'info', 'info', 'info']);
  });
});
