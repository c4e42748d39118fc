import type { Window } from '../window.ts';
import type { Interval } from './aggregate-shape.ts';
import { bucketFloor, calendarStarts, FIXED_BUCKETS } from './buckets.ts';

/** The bucket of `us` among sorted starts, by halving: a few comparisons of integers a row (no calendar arithmetic). */
function startOf(us: string, starts: readonly string[], lo = 0, hi = starts.length): string {
  if (hi - lo === 1) return starts[lo]!;
  const mid = (lo + hi) >> 1;
  return `CASE WHEN ${us} < ${starts[mid]} THEN ${startOf(us, starts, lo, mid)} ELSE ${startOf(us, starts, mid, hi)} END`;
}

/** A row's bucket as grouped (`key`), and the bucket's start from that key, when it is not the start itself. */
export interface BucketSql {
  key: string;
  start: ((key: string) => string) | null;
}

/**
 * Each row's bucket, from epoch microseconds (no time zone enters): hours, days and weeks as
 * their number from the window's first (no row is earlier: one division of a non-negative
 * number), turned into their start after grouping; months and years as their start, by
 * comparison with the window's own bucket starts (bound), or, for a window of very many, the
 * engine's calendar.
 */
export function bucketSql(interval: Interval, time: string, bind: (v: string) => string, w: Window): BucketSql {
  const us = `epoch_us(${time})`;
  if (interval === 'all') return { key: `CAST(${bind(String(w.from))} AS BIGINT)`, start: null };
  if (interval === 'month' || interval === 'year') {
    const starts = calendarStarts(w, interval);
    if (!starts) return { key: `epoch_us(date_trunc('${interval}', make_timestamp(${us})))`, start: null };
    return { key: startOf(us, starts.map((s) => `CAST(${bind(String(s))} AS BIGINT)`)), start: null };
  }
  const size = FIXED_BUCKETS[interval].size;
  const first = `CAST(${bind(String(bucketFloor(w.from, interval)))} AS BIGINT)`;
  return { key: `(${us} - ${first}) // ${size}`, start: (key) => `${first} + ${key} * ${size}` };
}

/**
 * A coordinate's cell index before the bounds are applied, per row and without branches: the
 * cell of v in [origin, −origin), the cell count for v = −origin, and one more for any v beyond
 * it (so 180 and 180.001 stay apart; `inGrid`: no value is beyond it); below the origin negative, not a number for NaN and the
 * infinities. Sizes that are whole quarters of a degree have exact edges: a power-of-two scaling
 * and floor are exact. Others go by hundredths: n, the whole number nearest v × 100, is within
 * one half (and a rounding) of it, so v is in the hundredth below the edge n / 100 (computed as
 * cellEdge does) or in the one from it: one comparison tells which; a cell is a whole number
 * of hundredths.
 */
export function rawCellSql(v: string, origin: -180 | -90, hundredths: number, inGrid = false): string {
  // Files whose every position was found inside the grid (FileFacts.inGrid) have nothing beyond: a comparison and an addition a row less.
  const beyond = inGrid ? '' : ` + CAST(${v} > ${-origin} AS DOUBLE)`;
  if (hundredths % 100 === 0) return `floor((floor(${v}) + ${-origin}) / ${hundredths / 100})${beyond}`;
  if (hundredths === 25 || hundredths === 50) return `floor(${v} * ${100 / hundredths}) + ${(-origin * 100) / hundredths}${beyond}`;
  const n = `i${origin === -180 ? 'x' : 'y'}`;
  const hundredth = `${n} + CAST(${v} >= ${n} / 100 AS DOUBLE) + ${-origin * 100 - 1}`;
  return `${hundredths === 1 ? hundredth : `floor((${hundredth}) / ${hundredths})`}${beyond}`;
}

/** The nearest hundredth that rawCellSql compares with (ix, iy), for sizes not whole quarters: a column of its own, computed once. */
export const guessSql = (v: string): string => `round(${v} * 100)`;

/**
 * Raw cell indexes (x, y) as a grid key: both null unless each lies in its range (a position
 * outside [−180, 180] × [−90, 90] or not a number), the one past the last (180, 90) in the last.
 */
export function cellKeySql(x: string, y: string, hundredths: number): [string, string] {
  const [nx, ny] = [36000 / hundredths, 18000 / hundredths];
  const inside = `${x} BETWEEN 0 AND ${nx} AND ${y} BETWEEN 0 AND ${ny}`;
  return [`CASE WHEN ${inside} THEN CAST(least(${x}, ${nx - 1}) AS BIGINT) END`, `CASE WHEN ${inside} THEN CAST(least(${y}, ${ny - 1}) AS BIGINT) END`];
}
