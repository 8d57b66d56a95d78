// containerd's hosts.toml for the real node's registry (dev/node.ts): containerd asks each `[host]` and then the
// `server` itself, so the server must trust the stack's CA too — or a manifest the registry lacks (404 from the
// `[host]`) is retried on the server without the CA and reported as a certificate error instead of `not found`.
import { describe, expect, it } from 'vitest';
import { registryHostsToml } from '../../dev/node.js';

/** The file's root keys and each table's keys, as `key = value` strings (enough TOML for this file). */
function sections(toml: string): Map<string, string[]> {
  const out = new Map<string, string[]>([['', []]]);
  let current = '';
  for (const raw of toml.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const table = /^\[(.+)\]$/.exec(line);
    if (table) {
      current = table[1] ?? '';
      out.set(current, []);
    } else out.get(current)?.push(line);
  }
  return out;
}

describe('registryHostsToml', () => {
  const toml = registryHostsToml(5443, '/stack/registry-cas.pem');
  const s = sections(toml);

  it('trusts the stack CA on the server itself, the host containerd asks last', () => {
    expect(s.get('')).toEqual(['server = "https://127.0.0.1:5443"', 'ca = "/stack/registry-cas.pem"']);
  });

  it('keeps a [host] for the registry (containerd 1.6 refuses a file without one), pulling and resolving with the CA', () => {
    expect([...s.keys()]).toEqual(['', 'host."https://127.0.0.1:5443"']);
    expect(s.get('host."https://127.0.0.1:5443"')).toEqual(['capabilities = ["pull", "resolve"]', 'ca = "/stack/registry-cas.pem"']);
  });
});
