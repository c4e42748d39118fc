import type { RowsCache } from '../engine/rows-cache.ts';
import type { Window } from '../window.ts';
import { heldGroups, type Groups } from './aggregate-groups.ts';
import type { AggregateRow } from './aggregate-rows.ts';

/** What the cache keeps of an answer: besides its groups, only what the preflight does not decide afresh. */
interface Kept {
  rows: AggregateRow[];
  truncated: boolean;
  next: Window | null;
}

/** The fewest bytes a group takes in the cache (`{"values":["<bucket>n"],"geometry":null}`): more groups than the entry bound allows are not read for it. */
const LEAST_GROUP_BYTES = 40;

/** Bucket starts and window bounds are bigints: kept as text. Non-finite numbers and -0 are written as null and 0 either way. */
const toJson = (g: Kept) => JSON.stringify(g, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
const fromJson = (text: string): Kept =>
  JSON.parse(text, (_k, v: unknown) => (typeof v === 'string' && /^-?\d+n$/.test(v) ? BigInt(v.slice(0, -1)) : v)) as Kept;

/**
 * The groups of an answer asked for before, from the rows cache (RESPONSE_CACHE_MB) under its
 * entity tag: data version, every parameter in effect, format and limit, so a key names one
 * answer and new data is a new key. Null: not there.
 */
export function cachedGroups(cache: RowsCache | null, key: string | null): Groups | null {
  const hit = key ? cache?.get(key) : undefined;
  if (!hit) return null;
  const kept = fromJson(hit.bytes.toString('utf8'));
  return heldGroups(kept.rows, kept.truncated, kept.next);
}

/**
 * Keeps the groups of an answer asked for a second time (the cache's admission), within its
 * bounds: an answer too large for an entry is neither read whole nor kept.
 */
export function keepGroups(cache: RowsCache | null, key: string | null, groups: Groups, dataVersion: string): void {
  if (!cache || !key || groups.once || groups.returned * LEAST_GROUP_BYTES > cache.maxEntryBytes || !cache.admit(key)) return;
  const rows = [...groups.batches()].flat();
  cache.set(key, { bytes: Buffer.from(toJson({ rows, truncated: groups.truncated, next: groups.next })), returned: rows.length, dataVersion });
}
