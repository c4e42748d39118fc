import type { RowsCache } from '../engine/rows-cache.ts';
import type { Window } from '../window.ts';
import type { AggregateRow } from './aggregate-rows.ts';

/** What an aggregate's answer holds besides what the preflight decides afresh (observation, version). */
export interface Groups {
  rows: AggregateRow[];
  truncated: boolean;
  next: Window | null;
}

/** Bucket starts and window bounds are bigints: kept as text. Non-finite numbers and -0 are written as null and 0 either way. */
const toJson = (g: Groups) => JSON.stringify(g, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
const fromJson = (text: string): Groups =>
  JSON.parse(text, (_k, v: unknown) => (typeof v === 'string' && /^-?\d+n$/.test(v) ? BigInt(v.slice(0, -1)) : v)) as Groups;

/**
 * The groups of an answer asked for before, from the rows cache (RESPONSE_CACHE_MB) under its
 * entity tag: data version, every parameter in effect, format and limit, so a key names one
 * answer and new data is a new key. Null: not there.
 */
export function cachedGroups(cache: RowsCache | null, key: string | null): Groups | null {
  const hit = key ? cache?.get(key) : undefined;
  return hit ? fromJson(hit.bytes.toString('utf8')) : null;
}

/** Keeps the groups of an answer asked for a second time (the cache's admission), within its bounds. */
export function keepGroups(cache: RowsCache | null, key: string | null, groups: Groups, dataVersion: string): void {
  if (!cache || !key || !cache.admit(key)) return;
  cache.set(key, { bytes: Buffer.from(toJson(groups)), returned: groups.rows.length, dataVersion });
}
