// A reproducible tar writer for image layers: POSIX ustar entries (regular files, directories, symlinks) with a PAX
// header for paths longer than ustar's 100 bytes, owner root, mtime 0, so the same files always give the same digest.

export interface TarEntry {
  /** Path inside the archive, without a leading slash; directories without a trailing one. */
  path: string;
  type: 'file' | 'dir' | 'symlink';
  mode: number;
  data?: Buffer;
  linkTarget?: string;
}

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, '0')}\0`;
}

function header(name: string, typeflag: string, mode: number, size: number, linkname = ''): Buffer {
  const h = Buffer.alloc(512, 0);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(mode & 0o7777, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii'); // uid
  h.write(octal(0, 8), 116, 'ascii'); // gid
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(0, 12), 136, 'ascii'); // mtime
  h.write('        ', 148, 'ascii'); // the checksum counts as spaces while summing
  h.write(typeflag, 156, 'ascii');
  h.write(linkname, 157, 100, 'utf8');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write('root', 265, 'ascii');
  h.write('root', 297, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

const pad = (n: number) => Buffer.alloc((512 - (n % 512)) % 512, 0);

/** A PAX record `<len> <key>=<value>\n`, whose length counts its own digits. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body);
  while (String(len + String(len).length).length !== String(len).length) len++;
  len += String(len).length;
  return `${len}${body}`;
}

/** The archive of `entries` in the order given (callers sort them for reproducibility). */
export function tarArchive(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const name = e.type === 'dir' ? `${e.path}/` : e.path;
    const link = e.linkTarget ?? '';
    if (Buffer.byteLength(name) > 100 || Buffer.byteLength(link) > 100) {
      const pax = Buffer.from(paxRecord('path', name) + (link ? paxRecord('linkpath', link) : ''));
      parts.push(header('PaxHeader', 'x', 0o644, pax.length), pax, pad(pax.length));
    }
    const short = Buffer.from(name).subarray(0, 100).toString('utf8');
    if (e.type === 'file') {
      const data = e.data ?? Buffer.alloc(0);
      parts.push(header(short, '0', e.mode, data.length), data, pad(data.length));
    } else if (e.type === 'dir') {
      parts.push(header(short, '5', e.mode, 0));
    } else {
      parts.push(header(short, '2', e.mode, 0, Buffer.from(link).subarray(0, 100).toString('utf8')));
    }
  }
  parts.push(Buffer.alloc(1024, 0));
  return Buffer.concat(parts);
}

/** Every parent directory of the entries' paths that is not an entry itself, so the layer creates them with a mode. */
export function withParentDirs(entries: readonly TarEntry[], mode = 0o755): TarEntry[] {
  const have = new Set(entries.filter((e) => e.type === 'dir').map((e) => e.path));
  const out: TarEntry[] = [];
  for (const e of entries) {
    const parts = e.path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (!have.has(dir)) {
        have.add(dir);
        out.push({ path: dir, type: 'dir', mode });
      }
    }
  }
  return [...out, ...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
