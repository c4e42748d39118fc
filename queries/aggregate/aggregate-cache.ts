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

/** The fewest bytes a group takes in the cache (`{"values":[{"bigint":"<bucket>"}],"geometry":null}`): more groups than the entry bound allows are not read for it. */
const LEAST_GROUP_BYTES = 40;

/** How JSON.stringify writes the object −0 is replaced with; in JSON text `{"` only ever begins an object, never lies inside a string. */
const NEGATIVE_ZERO = '{"-0":0}';

/**
 * Bucket starts and window bounds are bigints: kept as `{"bigint":"<digits>"}`, an object no value
 * of a group is (a text key such as "12n" stays text). −0 (a station on the prime meridian, its
 * WKB's sign bit set in Arrow and Parquet) is spelled `-0`, which JSON.parse reads back as −0
 * (JSON.stringify would write 0). Non-finite numbers are written as null either way.
 */
function toJson(g: unknown): string {
  let signed = false;
  const text = JSON.stringify(g, (_k, v: unknown) => {
    if (typeof v === 'bigint') return { bigint: String(v) };
    if (!Object.is(v, -0)) return v;
    signed = true;
    return { '-0': 0 };
  });
  return signed ? text.replaceAll(NEGATIVE_ZERO, '-0') : text;
}
const bigintOf = (v: unknown) => (v !== null && typeof v === 'object' && 'bigint' in v ? BigInt(v.bigint as string) : v);

/** Parsed without a reviver (it would be called for every coordinate of every cell), then only the values and bounds turned back into bigints. */
function fromJson(text: string): Kept {
  const kept = JSON.parse(text) as Kept;
  for (const row of kept.rows) {
    const values = row.values as unknown[];
    for (let i = 0; i < values.length; i++) values[i] = bigintOf(values[i]);
  }
  if (kept.next) kept.next = { from: bigintOf(kept.next.from) as bigint, to: bigintOf(kept.next.to) as bigint };
  return kept;
}

/**
 * The groups of an answer computed before, from the aggregate cache (AGGREGATE_CACHE_MB) under
 * its entity tag: data version, every parameter in effect, format and limit, so a key names one
 * answer and new data is a new key. Null: not there.
 */
export function cachedGroups(cache: RowsCache | null | undefined, key: string | null): Groups | null {
  const hit = key ? cache?.get(key) : undefined;
  if (!hit) return null;
  const kept = fromJson(hit.bytes.toString('utf8'));
  return heldGroups(kept.rows, kept.truncated, kept.next);
}

/** Builds a cache entry a group at a time as an answer's groups are read; `finish` keeps it. */
interface Keeper {
  add(row: AggregateRow): void;
  /** Whether the groups added so far passed the entry bound (nothing will be kept). */
  readonly full: boolean;
  /** Keeps the entry: only with every group of the answer added, under the bound. */
  finish(): void;
}

/** A keeper for `groups` under `key`, or null when the answer cannot be kept (no cache, no key, too many groups for an entry). */
function keeperOf(cache: RowsCache | null | undefined, key: string | null, groups: Groups, dataVersion: string): Keeper | null {
  if (!cache || !key || groups.returned * LEAST_GROUP_BYTES > cache.maxEntryBytes) return null;
  let rows: string[] = [];
  let length = 0;
  return {
    add(row) {
      if (length > cache.maxEntryBytes) return;
      const text = toJson(row);
      length += text.length + 1;
      // Past the bound the rows written so far are let go: never held whole for nothing.
      if (length > cache.maxEntryBytes) rows = [];
      else rows.push(text);
    },
    get full() {
      return length > cache.maxEntryBytes;
    },
    finish() {
      if (length > cache.maxEntryBytes || rows.length !== groups.returned) return;
      const bytes = Buffer.from(`{"truncated":${groups.truncated},"next":${toJson(groups.next)},"rows":[${rows.join(',')}]}`);
      cache.set(key, { bytes, returned: rows.length, dataVersion });
    },
  };
}

/** Spooled groups whose one read also fills the keeper, kept only when the read ends with every group (an aborted or failed read keeps nothing). */
function keptAsRead(groups: Groups, keeper: Keeper): Groups {
  return {
    ...groups,
    *batches() {
      for (const batch of groups.batches()) {
        for (const row of batch) keeper.add(row);
        yield batch;
      }
      keeper.finish();
    },
  };
}

/**
 * Keeps the groups of an answer when first computed (each one cost a GROUP BY over every file of
 * its window), within the cache's bounds: an answer too large for an entry is not kept, and is
 * written into the entry only until it passes the bound (never held whole for nothing). Spooled
 * groups, which can be read only once, are kept as the response reads them: the groups returned
 * then fill the entry on that read.
 */
export function keepGroups(cache: RowsCache | null | undefined, key: string | null, groups: Groups, dataVersion: string): Groups {
  const keeper = keeperOf(cache, key, groups, dataVersion);
  if (!keeper) return groups;
  if (groups.once) return keptAsRead(groups, keeper);
  for (const batch of groups.batches()) {
    for (const row of batch) keeper.add(row);
    if (keeper.full) return groups;
  }
  keeper.finish();
  return groups;
}
