// The ports of a benchmark's own stack: one layout, at a prefix of thousands each benchmark keeps to itself.
import type { StackPorts } from '../dev/stack.js';

/** The ephemeral port range, where an outgoing connection can take a port a moment before a process listens on it. */
const EPHEMERAL = { first: 32768, last: 60999 };

/**
 * A stack's ports at `prefix` thousands (14: etcd 14379/14380, API server 14443, Temporal 14233 with HTTP 14243 and
 * metrics 14244, the controller's metrics 14464). The Temporal UI's port (`…283`) stays clear of the eight ports the
 * PostgreSQL Temporal takes after its frontend's (dev/temporal-postgres.ts). A prefix whose ports would fall in the
 * ephemeral range is refused (EADDRINUSE was seen there).
 */
export function benchPorts(prefix: number): StackPorts {
  const base = prefix * 1000;
  if (base + 999 >= EPHEMERAL.first && base <= EPHEMERAL.last) throw new Error(`bench ports ${base}–${base + 999} are in the ephemeral range`);
  const at = (n: number) => base + n;
  return {
    etcdClient: at(379),
    etcdPeer: at(380),
    apiserver: at(443),
    controllerManager: at(257),
    scheduler: at(259),
    temporal: at(233),
    temporalUi: at(283),
    temporalHttp: at(243),
    temporalMetrics: at(244),
    controllerMetrics: at(464),
  };
}
