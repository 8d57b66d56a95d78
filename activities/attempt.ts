// Whether the running activity is on its first attempt: caches may answer a first attempt; a retry asks the API server.
import { Context } from '@temporalio/activity';

/**
 * True on an activity's first attempt: a retry may follow writes of the failed attempt that no pass recorded, or a
 * conflict a stale copy caused. (A step re-run after its worker died may count as a first attempt again; it runs only
 * after the workflow task timed out, seconds after those writes, by when the cache has long reflected them.)
 */
export function firstAttempt(): boolean {
  try {
    return Context.current().info.attempt <= 1;
  } catch {
    return true; // called outside an activity (unit tests)
  }
}
