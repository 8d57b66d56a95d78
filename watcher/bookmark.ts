// The watch bookmark: for each watched kind, the newest resourceVersion a leader had seen *and* delivered every poke
// of, kept on the leader Lease (ADR 0024). A new leader still lists everything (its caches need it), but pokes only
// the objects written after the bookmark of their kind: an object at or below it was seen by a leader whose pokes
// for it reached its workflow, which is durable from there. A kind without a bookmark (a first start, a Lease
// written by an older release, a kind added since) is poked whole, as before.
import type { KubeObject } from '../api/meta.js';
import { resourceVersionNumber } from '../api/meta.js';

/** The Lease annotation that carries it. */
export const BookmarkAnnotation = 'tidal.dev/watch-bookmark';

/** Kind (a watched kind, or `ConfigMap` for the config maps Tidal reads) → resourceVersion. */
export type WatchBookmark = Readonly<Record<string, string>>;

/** The bookmark on a Lease; undefined when there is none or it does not parse. */
export function parseBookmark(annotations: Record<string, string> | undefined): WatchBookmark | undefined {
  const raw = annotations?.[BookmarkAnnotation];
  if (!raw) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const out: Record<string, string> = {};
    for (const [kind, rv] of Object.entries(parsed)) if (typeof rv === 'string' && resourceVersionNumber(rv) !== undefined) out[kind] = rv;
    return out;
  } catch {
    return undefined;
  }
}

/** The annotation's value: kinds in a fixed order, so an unchanged bookmark writes the same text. */
export function formatBookmark(bookmark: WatchBookmark): string {
  return JSON.stringify(Object.fromEntries(Object.entries(bookmark).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

/**
 * True when `obj` may have changed since a leader last delivered its kind's pokes: no bookmark for the kind, a
 * version that is not a number, or one above the bookmark's.
 */
export function writtenAfter(bookmark: WatchBookmark | undefined, kind: string, obj: KubeObject): boolean {
  const mark = resourceVersionNumber(bookmark?.[kind]);
  const version = resourceVersionNumber(obj.metadata.resourceVersion);
  return mark === undefined || version === undefined || version > mark;
}

/**
 * The bookmark after a moment at which every change seen had been delivered: each kind's newest seen version, never
 * below what it was (a re-list may report an older cache's version).
 */
export function advanceBookmark(before: WatchBookmark | undefined, seen: Readonly<Record<string, string | undefined>>): WatchBookmark {
  const out: Record<string, string> = { ...before };
  for (const [kind, rv] of Object.entries(seen)) {
    const now = resourceVersionNumber(rv);
    if (now === undefined || now === 0n) continue;
    const was = resourceVersionNumber(out[kind]);
    if (was === undefined || now > was) out[kind] = rv!;
  }
  return out;
}
