import type { RowsCache } from '../engine/rows-cache.ts';
import type { Window } from '../window.ts';
import { heldGroups, type Groups } from './aggregate-groups.ts';
import { readRows, RowWriter } from './aggregate-codec.ts';
import type { AggregateColumn, AggregateRow } from './aggregate-rows.ts';

/**
 * An entry: whether the answer was cut (u8), whether it has a next window (u8) and its bounds (two
 * i64, epoch µs), then its groups in the codec's bytes (aggregate-codec.ts), the form spooled
 * groups take on disk too.
 */
const HEADER_BYTES = 18;

/** The fewest bytes a group takes in an entry (its length, its bucket, its geometry's tag): more groups than the entry bound allows are not read for it. */
const LEAST_GROUP_BYTES = 13;

function header(groups: Pick<Groups, 'truncated' | 'next'>): Buffer {
  const bytes = Buffer.alloc(HEADER_BYTES);
  bytes.writeUint8(groups.truncated ? 1 : 0, 0);
  bytes.writeUint8(groups.next ? 1 : 0, 1);
  bytes.writeBigInt64LE(groups.next?.from ?? 0n, 2);
  bytes.writeBigInt64LE(groups.next?.to ?? 0n, 10);
  return bytes;
}

/**
 * The groups of an answer computed before, from the aggregate cache (AGGREGATE_CACHE_MB) under
 * its entity tag: data version, every parameter in effect, format and limit, so a key names one
 * answer and new data is a new key. Null: not there.
 */
export function cachedGroups(cache: RowsCache | null | undefined, key: string | null, columns: readonly AggregateColumn[]): Groups | null {
  const hit = key ? cache?.get(key) : undefined;
  if (!hit) return null;
  const { bytes } = hit;
  const next: Window | null = bytes.readUint8(1) ? { from: bytes.readBigInt64LE(2), to: bytes.readBigInt64LE(10) } : null;
  const { rows } = readRows(columns, bytes, HEADER_BYTES, hit.returned);
  if (rows.length !== hit.returned) throw new Error(`an aggregate cache entry held ${rows.length} of its ${hit.returned} groups`);
  return heldGroups(rows, bytes.readUint8(0) === 1, next);
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
function keeperOf(cache: RowsCache | null | undefined, key: string | null, groups: Groups, columns: readonly AggregateColumn[], dataVersion: string): Keeper | null {
  if (!cache || !key || groups.returned * LEAST_GROUP_BYTES > cache.maxEntryBytes) return null;
  // Past the bound the writer (and its buffer, grown towards the bound) is let go: never held whole for nothing.
  let writer: RowWriter | null = new RowWriter(columns);
  let rows = 0;
  return {
    add(row) {
      if (!writer) return;
      writer.write(row);
      rows++;
      if (HEADER_BYTES + writer.bytes > cache.maxEntryBytes) writer = null;
    },
    get full() {
      return writer === null;
    },
    finish() {
      if (!writer || rows !== groups.returned) return;
      cache.set(key, { bytes: Buffer.concat([header(groups), writer.take()]), returned: rows, dataVersion });
      writer = null;
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
export function keepGroups(cache: RowsCache | null | undefined, key: string | null, groups: Groups, columns: readonly AggregateColumn[], dataVersion: string): Groups {
  const keeper = keeperOf(cache, key, groups, columns, dataVersion);
  if (!keeper) return groups;
  if (groups.once) return keptAsRead(groups, keeper);
  for (const batch of groups.batches()) {
    for (const row of batch) keeper.add(row);
    if (keeper.full) return groups;
  }
  keeper.finish();
  return groups;
}
