// Background processes of the local stack: started detached with a log file each, recorded in a pids file so
// `down` stops exactly what `up` started (the command line is checked before a signal is sent).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync, closeSync } from 'node:fs';
import path from 'node:path';

export interface ProcessRecord {
  name: string;
  pid: number;
  bin: string;
  args: string[];
  log: string;
}

export class ProcessTable {
  private readonly file: string;

  constructor(private readonly dir: string) {
    this.file = path.join(dir, 'pids.json');
  }

  read(): ProcessRecord[] {
    if (!existsSync(this.file)) return [];
    return JSON.parse(readFileSync(this.file, 'utf8')) as ProcessRecord[];
  }

  private write(records: ProcessRecord[]): void {
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(this.file, JSON.stringify(records, null, 2));
  }

  /** The record of `name` if its process is still the one we started. */
  running(name: string): ProcessRecord | undefined {
    const rec = this.read().find((r) => r.name === name);
    return rec && isOurs(rec) ? rec : undefined;
  }

  /**
   * Starts `bin`. `execs`: the program a wrapper (`unshare`, `sh -c 'exec …'`) replaces itself with, which is what
   * later checks find in /proc (default: `bin`).
   */
  start(name: string, bin: string, args: string[], env: NodeJS.ProcessEnv = process.env, cwd?: string, execs?: string): ProcessRecord {
    const logDir = path.join(this.dir, 'logs');
    mkdirSync(logDir, { recursive: true });
    const log = path.join(logDir, `${name}.log`);
    const fd = openSync(log, 'a');
    const child = spawn(bin, args, { detached: true, stdio: ['ignore', fd, fd], env, ...(cwd ? { cwd } : {}) });
    closeSync(fd);
    if (child.pid === undefined) throw new Error(`could not start ${name} (${bin})`);
    child.unref();
    const rec: ProcessRecord = { name, pid: child.pid, bin: execs ?? bin, args, log };
    this.write([...this.read().filter((r) => r.name !== name), rec]);
    return rec;
  }

  /** Stops every recorded process, last started first: SIGTERM, then SIGKILL after `graceMs`. */
  async stopAll(graceMs = 10_000, log: (s: string) => void = () => {}): Promise<void> {
    for (const rec of this.read().reverse()) {
      await stopOne(rec, graceMs, log);
      this.write(this.read().filter((r) => r.name !== rec.name));
    }
  }

  /**
   * A crash and a supervisor's restart: `signal` (SIGKILL by default) to `name`, `downMs` with it gone, then the same
   * command line again. Returns the new record; the caller waits for it to serve.
   */
  async crash(name: string, opts: { signal?: NodeJS.Signals; downMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<ProcessRecord> {
    const rec = this.running(name);
    if (!rec) throw new Error(`${name} is not running`);
    process.kill(rec.pid, opts.signal ?? 'SIGKILL');
    while (isOurs(rec)) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, opts.downMs ?? 0));
    return this.start(rec.name, rec.bin, rec.args, opts.env);
  }

  async stop(name: string, graceMs = 10_000): Promise<void> {
    const rec = this.read().find((r) => r.name === name);
    if (!rec) return;
    await stopOne(rec, graceMs, () => {});
    this.write(this.read().filter((r) => r.name !== name));
  }
}

function isOurs(rec: ProcessRecord): boolean {
  try {
    const cmdline = readFileSync(`/proc/${rec.pid}/cmdline`, 'utf8').split('\0');
    const stat = readFileSync(`/proc/${rec.pid}/stat`, 'utf8');
    if (/\) Z /.test(stat)) return false; // a zombie is already dead
    return cmdline[0] === rec.bin || cmdline.includes(rec.bin);
  } catch {
    return false;
  }
}

async function stopOne(rec: ProcessRecord, graceMs: number, log: (s: string) => void): Promise<void> {
  if (!isOurs(rec)) return;
  log(`stopping ${rec.name} (pid ${rec.pid})`);
  try {
    process.kill(rec.pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && isOurs(rec)) await new Promise((r) => setTimeout(r, 100));
  if (isOurs(rec)) {
    log(`${rec.name} did not stop in ${graceMs} ms; killing it`);
    try {
      process.kill(rec.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

/** The values a command line gives a repeatable flag (`--flag value`), in order. */
export function flagValues(args: readonly string[], flag: string): string[] {
  return args.filter((_, i) => args[i - 1] === flag);
}

/** Whether process `pid` exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The last lines of a log file, for error messages. */
export function tail(file: string, lines = 20): string {
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}
