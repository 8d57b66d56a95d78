// config-logging applied live: the process's root logger and every child it makes are followed (weakly), and each
// valid config-logging sets their pino level — `loglevel.webhook` for the webhook's loggers, `loglevel.controller`
// for the rest, else zap-logger-config's level, else the start-up LOG_LEVEL (api/config/logging.ts).
import type { Logger } from 'pino';
import { pinoLevelFor, type LoggingConfig } from '../api/config/logging.js';

export class LiveLogLevels {
  private readonly loggers = new Set<WeakRef<Logger>>();
  private current: LoggingConfig | undefined;

  constructor(private readonly startLevel: string) {}

  /** Follows `logger` (pino's onChild calls this for every child); it takes the config in force at once. */
  track(logger: Logger): void {
    this.loggers.add(new WeakRef(logger));
    if (this.current) this.set(logger, this.current);
  }

  /** The logger's component: `webhook` for the webhook's loggers, `controller` for every other. */
  static componentOf(logger: Logger): 'webhook' | 'controller' {
    return (logger.bindings() as { component?: unknown }).component === 'webhook' ? 'webhook' : 'controller';
  }

  apply(cfg: LoggingConfig): void {
    this.current = cfg;
    for (const ref of this.loggers) {
      const logger = ref.deref();
      if (logger === undefined) this.loggers.delete(ref);
      else this.set(logger, cfg);
    }
  }

  private set(logger: Logger, cfg: LoggingConfig): void {
    const level = pinoLevelFor(cfg, LiveLogLevels.componentOf(logger), this.startLevel);
    if (level !== undefined && logger.level !== level) logger.level = level;
  }
}
