// pino JSON logs, and a bridge so Temporal's own logs (worker, workflows via sinks) land in the same stream.
import { pino, type Logger } from 'pino';
import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';

/** The process's logger; `onChild` sees every child logger made from it (config-logging follows them). */
export function makeLogger(level: string, name = 'tidal', onChild?: (child: Logger) => void): Logger {
  return pino({ name, level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime, ...(onChild ? { onChild } : {}) });
}

export function temporalLogger(log: Logger): TemporalLogger {
  const emit = (level: LogLevel, message: string, meta?: LogMetadata) => {
    const clean: Record<string, unknown> = {};
    // The SDK passes its timestamp under a symbol key; pino has its own.
    for (const [k, v] of Object.entries(meta ?? {})) clean[k] = v;
    const l = level.toLowerCase() as 'trace' | 'debug' | 'info' | 'warn' | 'error';
    log[l](clean, message);
  };
  return {
    log: emit,
    trace: (m, meta) => emit('TRACE', m, meta),
    debug: (m, meta) => emit('DEBUG', m, meta),
    info: (m, meta) => emit('INFO', m, meta),
    warn: (m, meta) => emit('WARN', m, meta),
    error: (m, meta) => emit('ERROR', m, meta),
  };
}
