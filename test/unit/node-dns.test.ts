// The real node's cluster DNS for upstream Knative's processes (dev/node-dns.ts): a query's question read back, and
// the answer — one A record with a 1 s TTL, or NXDOMAIN — as a resolver reads it.
import { describe, expect, it } from 'vitest';
import { answer, parseQuestion } from '../../dev/node-dns.js';

/** A standard query (id 0x1234, RD) for `name` of `type`. */
function query(name: string, type = 1): Buffer {
  const labels = name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')]));
  const header = Buffer.from([0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
  const tail = Buffer.alloc(5);
  tail.writeUInt16BE(type, 1);
  tail.writeUInt16BE(1, 3);
  return Buffer.concat([header, ...labels, tail]);
}

describe('node-dns', () => {
  const q = query('Autoscaler.knative-serving.svc.cluster.local');

  it('reads the question: the name in lower case, its type, where it ends', () => {
    expect(parseQuestion(q)).toEqual({ name: 'autoscaler.knative-serving.svc.cluster.local', type: 1, end: q.length });
    expect(parseQuestion(q.subarray(0, 20))).toBeUndefined();
  });

  it('answers with one A record for the node IP, keeping the id and the question', () => {
    const a = answer(q, q.length, '10.250.0.1', true);
    expect(a.readUInt16BE(0)).toBe(0x1234);
    expect(a.readUInt16BE(2) & 0x000f).toBe(0); // NOERROR
    expect(a.readUInt16BE(2) & 0x8000).toBe(0x8000); // a response
    expect([a.readUInt16BE(4), a.readUInt16BE(6)]).toEqual([1, 1]);
    expect(a.subarray(12, q.length)).toEqual(q.subarray(12));
    const rr = a.subarray(q.length);
    expect([rr.readUInt16BE(0), rr.readUInt16BE(2), rr.readUInt32BE(6), rr.readUInt16BE(10)]).toEqual([0xc00c, 1, 1, 4]);
    expect([...rr.subarray(12)]).toEqual([10, 250, 0, 1]);
  });

  it('answers NXDOMAIN for a name not on the node, and no record for another type of a known name', () => {
    const nx = answer(q, q.length, undefined, true);
    expect(nx.readUInt16BE(2) & 0x000f).toBe(3);
    expect(nx.readUInt16BE(6)).toBe(0);
    const aaaa = query('autoscaler.knative-serving.svc.cluster.local', 28);
    const none = answer(aaaa, aaaa.length, '10.250.0.1', false);
    expect(none.readUInt16BE(2) & 0x000f).toBe(0);
    expect(none.readUInt16BE(6)).toBe(0);
    expect(none.length).toBe(aaaa.length);
  });
});
