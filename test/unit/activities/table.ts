// Table tests in the style of Knative's (knative.dev/pkg/reconciler/testing `TableTest`), for Tidal's steps over
// the in-memory API server (kube-fake.ts). A row names a case, seeds the objects in the cluster, says what happened
// before the pass under test (earlier passes, another writer's edit, another controller's status; their writes and
// Events do not count), and lists what the pass must do: the objects it creates, updates, patches and deletes, the
// statuses it writes, the Events it records, the error it fails with. What a row does not list, the pass must not
// do. Writes and Events are compared as sets (sorted): Tidal makes some of them side by side, and the order in which
// the API server answers them is not the reconciler's.
import { expect, it } from 'vitest';
import { apiVersionOf, Resources, type ResourceType } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Call, KubeFake } from './kube-fake.js';

/**
 * A write the pass must make: `<Kind> <name>` (the kind as the API spells it: `Service` is the core one), or with
 * what the object sent must match (`toMatchObject`). Listed twice, the name is written twice, matched in order.
 */
export type Want = string | [id: string, body: unknown];

/** One row of a table. `C` is the table's context (`TableContext` and what the table adds to it). */
export interface Row<C> {
  name: string;
  /** The objects in the cluster before anything runs (their type told by apiVersion and kind). */
  objects: KubeObject[];
  /** What happens before the pass under test, in order; none of its writes or Events count. */
  given?: ((c: C) => unknown)[];
  /** Objects the pass creates (an apply or create of an object that was not there), attempted ones included. */
  wantCreates?: Want[];
  /** Objects the pass writes whole again (an apply or update of an object that was there). */
  wantUpdates?: Want[];
  /** Merge patches: the labeler's marks, a finalizer. */
  wantPatches?: Want[];
  wantDeletes?: string[];
  /** `/status` writes. */
  wantStatusUpdates?: Want[];
  /** `<type> <reason> <message>` of each Event. */
  wantEvents?: string[];
  /** The pass fails with this error (its message contains it, or matches it). */
  wantErr?: string | RegExp;
  /** What else must hold once the pass is done (Knative's PostConditions): the outcome and the cluster. */
  then?: (c: C, outcome: unknown) => void;
}

/** What a table gives each row: the cluster, the Events recorded, and the pass under test. */
export interface TableContext {
  kube: KubeFake;
  events: string[];
  reconcile: () => Promise<unknown>;
}

const id = (c: Call) => `${c.kind} ${c.name}`;
const idOf = (w: Want) => (typeof w === 'string' ? w : w[0]);
const sorted = (xs: string[]) => [...xs].sort();

/** The calls of one class the pass made, against the wanted writes of that class. */
function expectWrites(what: string, calls: Call[], wants: Want[] = []): void {
  expect(sorted(calls.map(id)), what).toEqual(sorted(wants.map(idOf)));
  const pending = [...calls];
  for (const want of wants) {
    const at = pending.findIndex((c) => id(c) === idOf(want));
    const [call] = pending.splice(at, 1);
    if (typeof want !== 'string') expect(call?.body, `${what}: ${want[0]}`).toMatchObject(want[1] as object);
  }
}

/** The type of `obj` among Tidal's kinds and `more`, by its apiVersion and kind. */
function typeOf(obj: KubeObject, more: ResourceType[]): ResourceType {
  const type = [...Object.values(Resources), ...more].find((t) => apiVersionOf(t) === obj.apiVersion && t.kind === obj.kind);
  if (!type) throw new Error(`no resource type for ${obj.apiVersion} ${obj.kind}`);
  return type;
}

/**
 * One `it` per row: `setup` builds the row's context over a cluster seeded with its objects. `types`: the kinds the
 * rows seed that Tidal's `Resources` do not name.
 */
export function tableTest<C extends TableContext, R extends Row<C> = Row<C>>(rows: R[], setup: (row: R) => C, types: ResourceType[] = []): void {
  for (const row of rows) {
    it(row.name, async () => {
      const c = setup(row);
      for (const obj of row.objects) c.kube.seed(typeOf(obj, types), obj);
      for (const step of row.given ?? []) await step(c);
      c.kube.calls = [];
      c.events.length = 0;
      const result = await c.reconcile().then(
        (outcome) => ({ outcome }),
        (err: unknown) => ({ err: err instanceof Error ? err : new Error(String(err)) }),
      );
      if (row.wantErr === undefined && 'err' in result) throw result.err;
      if (row.wantErr !== undefined) {
        expect('err' in result, 'the pass fails').toBe(true);
        if ('err' in result) expect(result.err.message).toMatch(row.wantErr);
      }
      const writes = c.kube.writes();
      const creates = writes.filter((w) => (w.verb === 'apply' || w.verb === 'create') && !w.existed);
      const updates = writes.filter((w) => (w.verb === 'apply' && w.existed) || w.verb === 'update');
      expectWrites('creates', creates, row.wantCreates);
      expectWrites('updates', updates, row.wantUpdates);
      expectWrites('patches', c.kube.writes('patch'), row.wantPatches);
      expectWrites('deletes', c.kube.writes('delete'), row.wantDeletes);
      expectWrites('status updates', c.kube.writes('status'), row.wantStatusUpdates);
      expect(sorted(c.events), 'events').toEqual(sorted(row.wantEvents ?? []));
      row.then?.(c, 'outcome' in result ? result.outcome : undefined);
    });
  }
}

/**
 * Conditions as a status write lists them (sorted by type), from `Type: 'Status [Reason[: message]]'`:
 * `{ Ready: 'Unknown Deploying', Active: 'False NoTraffic: The target is not receiving traffic.' }`.
 */
export function conditionsOf(conditions: Record<string, string>): { type: string; status: string; reason?: string; message?: string }[] {
  return Object.keys(conditions)
    .sort()
    .map((type) => {
      const [, status, reason, message] = /^(\S+)(?: ([^:]+))?(?:: (.*))?$/u.exec(conditions[type]!)!;
      return { type, status: status!, ...(reason !== undefined ? { reason } : {}), ...(message !== undefined ? { message } : {}) };
    });
}
