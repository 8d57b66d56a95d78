// The ports of a benchmark's own stack: one layout (dev/stack.ts portsAt), at a prefix of thousands each benchmark keeps
// to itself.
import { portsAt } from '../dev/stack.js';

export const benchPorts = portsAt;
