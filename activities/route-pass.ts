// What the parts of one Route pass share (activities/route.ts): the Route as read and as reconciled, the status the
// pass computes, its time, its Events, and the writes it starts beside the rest, which it waits for before it ends.
import type { RouteStatus } from '../api/lifecycle/route.js';
import type { ObjectKey } from '../api/meta.js';
import type { Route } from '../api/serving.js';
import type { RecordLater } from './apply.js';
import type { ActivityDeps } from './deps.js';
import type { WrittenVersions } from './written.js';

export interface RoutePass {
  deps: ActivityDeps;
  key: ObjectKey;
  /** The Route as read. */
  raw: Route;
  /** The Route with its defaults: what is programmed. */
  route: Route;
  /** The copy whose status the pass computes; `status` is that status. */
  reconciled: Route;
  status: RouteStatus;
  /** The pass's time: conditions' transitions, the labeler's timestamps. */
  now: string;
  /** The versions the workflow's passes wrote before (activities/written.ts). */
  wrote: WrittenVersions;
  record: RecordLater;
  /** Keeps a write started beside the rest: the pass waits for it before it returns or throws. */
  track: <T>(write: Promise<T>) => Promise<T>;
}
