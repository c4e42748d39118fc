import type { DuckDBMaterializedResult, DuckDBValue } from '@duckdb/node-api';
import type { Instant } from '../instant.ts';
import type { AggregateShape } from './aggregate-shape.ts';
import type { AggregateColumns } from './compile-aggregate.ts';
import type { Window } from '../window.ts';
import { cutOfRuns, heldGroups, type Groups } from './aggregate-groups.ts';
import { chunkPartials, groupFinisher, type PartialGroup } from './aggregate-rows.ts';
import { addExact } from '../exact/exact-sum.ts';
import { bucketRuns } from './buckets.ts';

/**
 * Text as DuckDB orders it (bytes of UTF-8, the order of code points): UTF-16 units compare so
 * but for those of characters past U+FFFF, which are moved above U+E000–U+FFFF.
 */
function compareText(a: string, b: string): number {
  for (let i = 0, n = Math.min(a.length, b.length); i < n; i++) {
    let [x, y] = [a.charCodeAt(i), b.charCodeAt(i)];
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) [x, y] = [x >= 0xe000 ? x - 0x800 : x + 0x2000, y >= 0xe000 ? y - 0x800 : y + 0x2000];
    return x - y;
  }
  return a.length - b.length;
}

/** Two keys as compileAggregate orders them: ascending, null last. */
function compareKey(a: DuckDBValue, b: DuckDBValue): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  if (typeof a === 'string' && typeof b === 'string') return compareText(a, b);
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) return a < b ? -1 : a > b ? 1 : 0;
  return compareText(String(a), String(b));
}

/** Two groups in the order of a statement's result: bucket, then keys. */
export function compareGroups(a: PartialGroup, b: PartialGroup): number {
  if (a.bucket !== b.bucket) return a.bucket < b.bucket ? -1 : 1;
  for (let i = 0; i < a.keys.length; i++) {
    const c = compareKey(a.keys[i]!, b.keys[i]!);
    if (c !== 0) return c;
  }
  return 0;
}

/** DuckDB's minimum and maximum of doubles: NaN above every number, null below none. */
const least = (a: number | null, b: number | null) => (a === null || (Number.isNaN(a) && b !== null) ? b : b === null || Number.isNaN(b) ? a : b < a ? b : a);
const greatest = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Number.isNaN(a) || Number.isNaN(b) ? NaN : b > a ? b : a);

/** `b`'s rows, values and totals added into `a` (the same group of another part; `a` is the merge's own): every count and total exact. */
function mergeInto(a: PartialGroup, b: PartialGroup, shape: AggregateShape): void {
  a.n += b.n;
  shape.stats.forEach((s, i) => {
    if (!('fn' in s) || s.fn === 'sum' || s.fn === 'mean') return;
    const [x, y] = [a.stats[i]!, b.stats[i]!];
    a.stats[i] = s.fn === 'count' ? (x ?? 0) + (y ?? 0) : s.fn === 'min' ? least(x, y) : greatest(x, y);
  });
  a.lanes.forEach((l, j) => {
    const o = b.lanes[j]!;
    a.lanes[j] = { count: l.count + o.count, nonFinite: l.nonFinite + o.nonFinite, total: addExact(l.total, o.total) };
  });
  a.lat ??= b.lat;
  a.lon ??= b.lon;
}

/** A part's partial groups, in its order. */
function partialsOf(r: DuckDBMaterializedResult, shape: AggregateShape, cols: AggregateColumns): PartialGroup[] {
  const read = chunkPartials(r.columnNames(), shape, cols);
  const out: PartialGroup[] = [];
  for (let i = 0, chunks = r.chunkCount; i < chunks; i++) for (const g of read(r.getChunk(i))) out.push(g);
  return out;
}

/**
 * The first `most` groups of the parts' groups merged, in order. Each part gave its first groups
 * in the same order, so a group among the first `most` of the merge has all its parts' rows: every
 * group before it in a part is before it in the merge too.
 */
export function mergeParts(parts: readonly PartialGroup[][], shape: AggregateShape, most: number): PartialGroup[] {
  const at = parts.map(() => 0);
  const out: PartialGroup[] = [];
  for (;;) {
    let pick = -1;
    parts.forEach((p, i) => {
      if (at[i]! < p.length && (pick < 0 || compareGroups(p[at[i]!]!, parts[pick]![at[pick]!]!) < 0)) pick = i;
    });
    if (pick < 0) return out;
    const g = parts[pick]![at[pick]!++]!;
    const last = out.at(-1);
    if (last && compareGroups(last, g) === 0) mergeInto(last, g, shape);
    else if (out.length === most) return out;
    else out.push(g);
  }
}

/** Each group's bucket, in order. */
function* bucketsOf(groups: readonly PartialGroup[]): Generator<Instant> {
  for (const g of groups) yield g.bucket;
}

export interface MergeQuery {
  shape: AggregateShape;
  cols: AggregateColumns;
  window: Window;
  rowLimit: number;
  /** The most groups each part was asked for, less one (at most rowLimit): null when the merge has more than that and less than the limit allows. */
  most: number;
}

/**
 * The window's groups from parts that may share groups (cut inside a bucket), merged exactly and
 * held, cut past the row limit as one statement's would be; null when they are more than `most`
 * short of the limit (the caller then computes them otherwise).
 */
export function mergedGroups(results: readonly DuckDBMaterializedResult[], q: MergeQuery): Groups | null {
  // One part of more groups than that makes a merge of more: no group read.
  if (q.most < q.rowLimit && results.some((r) => r.rowCount > q.most)) return null;
  const merged = mergeParts(
    results.map((r) => partialsOf(r, q.shape, q.cols)),
    q.shape,
    q.most + 1,
  );
  if (merged.length > q.most && q.most < q.rowLimit) return null;
  const decided = merged.length <= q.rowLimit ? { returned: merged.length, truncated: false, next: null } : cutOfRuns(bucketRuns(bucketsOf(merged)), q.rowLimit, q.window.to);
  const finish = groupFinisher(q.shape, q.cols);
  return heldGroups(merged.slice(0, decided.returned).map(finish), decided.truncated, decided.next);
}
