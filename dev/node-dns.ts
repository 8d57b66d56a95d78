// Cluster DNS for upstream Knative's processes in the real node's namespace, which has no Service network: a UDP
// responder that answers `<service>.<namespace>.svc.<domain>` with the node IP when that Service's Endpoints are on
// the node IP (the activator, the autoscaler, and a Revision's public Service while the activator is in its path),
// and NXDOMAIN otherwise. The node IP's Service ports that differ from the processes' own are forwarded by the caller.
//
//   tsx dev/node-dns.ts --listen 127.0.0.1:53 --node-ip 10.250.0.1 --kubeconfig <file> --kubectl <bin>
import dgram from 'node:dgram';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { argValue } from './cli-args.js';

const run = promisify(execFile);

/** The question of a DNS query: its name (lower case, no trailing dot), type, and where the question ends. */
export function parseQuestion(msg: Buffer): { name: string; type: number; end: number } | undefined {
  if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return undefined;
  const labels: string[] = [];
  let i = 12;
  while (i < msg.length && msg[i] !== 0) {
    const len = msg[i] ?? 0;
    if (len > 63) return undefined; // no compression in a question
    labels.push(msg.subarray(i + 1, i + 1 + len).toString('latin1'));
    i += 1 + len;
  }
  if (i + 5 > msg.length) return undefined;
  return { name: labels.join('.').toLowerCase(), type: msg.readUInt16BE(i + 1), end: i + 5 };
}

/** The answer to `query`: its header and question, with one A record for `ip` (type A only), or NXDOMAIN. */
export function answer(query: Buffer, end: number, ip: string | undefined, isA: boolean): Buffer {
  const header = Buffer.from(query.subarray(0, end));
  const withRecord = ip !== undefined && isA;
  // QR, the query's RD, RA; rcode 3 (NXDOMAIN) when the name is unknown.
  header.writeUInt16BE(0x8180 | (query.readUInt16BE(2) & 0x0100) | (ip === undefined ? 3 : 0), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(withRecord ? 1 : 0, 6);
  header.writeUInt16BE(0, 8);
  header.writeUInt16BE(0, 10);
  if (!withRecord) return header;
  const record = Buffer.alloc(16);
  record.writeUInt16BE(0xc00c, 0); // the question's name
  record.writeUInt16BE(1, 2); // A
  record.writeUInt16BE(1, 4); // IN
  record.writeUInt32BE(1, 6); // TTL 1 s: a Revision's Service moves between the activator and its pods
  record.writeUInt16BE(4, 10);
  ip.split('.').forEach((o, j) => record.writeUInt8(Number(o), 12 + j));
  return Buffer.concat([header, record]);
}

function main(args: string[]): void {
  const [host, port] = (argValue(args, 'listen') ?? '127.0.0.1:53').split(':');
  const nodeIp = argValue(args, 'node-ip');
  const kubeconfig = argValue(args, 'kubeconfig');
  const kubectl = argValue(args, 'kubectl');
  const domain = argValue(args, 'domain') ?? 'cluster.local';
  if (!nodeIp || !kubeconfig || !kubectl) throw new Error('--node-ip, --kubeconfig and --kubectl are required');
  const suffix = `.svc.${domain}`;

  const onNode = async (name: string): Promise<boolean> => {
    if (!name.endsWith(suffix)) return false;
    const parts = name.slice(0, -suffix.length).split('.');
    if (parts.length !== 2) return false;
    const [svc, ns] = parts as [string, string];
    const { stdout } = await run(kubectl, [
      '--kubeconfig',
      kubeconfig,
      'get',
      'endpoints',
      svc,
      '-n',
      ns,
      '--ignore-not-found',
      '-o',
      'jsonpath={.subsets[*].addresses[*].ip}',
    ]);
    return stdout.split(' ').includes(nodeIp);
  };

  const socket = dgram.createSocket('udp4');
  socket.on('message', (msg, from) => {
    const q = parseQuestion(msg);
    if (!q) return;
    void onNode(q.name)
      .catch(() => false)
      .then((yes) => socket.send(answer(msg, q.end, yes ? nodeIp : undefined, q.type === 1), from.port, from.address));
  });
  socket.bind(Number(port), host, () => console.error(`answering *${suffix} on ${host}:${port}`));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
