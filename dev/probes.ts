// Waiting for a stack's processes: poll until healthy, GET a URL, test a port; and a folder's YAML files.
import { readdirSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { isAlive, tail, type ProcessRecord } from './processes.js';

/**
 * Polls `check` every 250 ms until it says true. Fails after `timeoutMs`, or at once when `rec`'s process has exited
 * (nothing restarts it meanwhile), with the last lines of its log.
 */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, rec?: ProcessRecord): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      /* not yet */
    }
    const exited = rec !== undefined && !isAlive(rec.pid);
    if (exited || Date.now() > deadline) {
      const why = exited ? 'exited' : `did not become healthy in ${timeoutMs / 1000}s`;
      throw new Error(`${what} ${why}${rec ? `; last lines of ${rec.log}:\n${tail(rec.log)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** GET `url` (http or https, any certificate): true on 200, false on anything else within 2 s. */
export function httpOk(url: string, opts: https.RequestOptions = {}): Promise<boolean> {
  return new Promise((resolve) => {
    const mod = url.startsWith('https:') ? https : http;
    const req = mod.get(url, { timeout: 2000, rejectUnauthorized: false, ...opts }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
  });
}

/** The YAML files of a folder, sorted. */
export function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => path.join(dir, f));
}

/** Whether something accepts a TCP connection on 127.0.0.1:`port`. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}
