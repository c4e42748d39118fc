import type { Instant } from '../instant.ts';
import type { Window } from '../window.ts';
import type { Interval } from './aggregate-shape.ts';

/**
 * Bucket time, in one place: where each interval's buckets start (UTC, epoch microseconds), for
 * the statements that group rows (aggregate-keys.ts) and for the cuts between a window's parts
 * (aggregate-slices.ts), which must agree or a bucket would be split across parts; and the runs
 * of groups a bucket holds, in order, which say where an answer past the row limit is cut.
 */

/** Buckets of one length: their size, and an instant one starts at (1970-01-05, the first Monday after the epoch, for ISO weeks). */
export const FIXED_BUCKETS = {
  hour: { size: 3_600_000_000n, origin: 0n },
  day: { size: 86_400_000_000n, origin: 0n },
  week: { size: 604_800_000_000n, origin: 4n * 86_400_000_000n },
} as const;

type Calendar = 'month' | 'year';

const floorTo = (t: Instant, size: bigint, origin: bigint): Instant => t - ((((t - origin) % size) + size) % size);

/** The start of the UTC calendar month or year holding `t`; its time is NaN past the years a Date holds. */
function calendarStart(t: Instant, interval: Calendar): Date {
  const day = new Date(Number(floorTo(t, 1000n, 0n) / 1000n));
  const start = new Date(0);
  // setUTCFullYear, not Date.UTC: years 0–99 are years, not 1900s.
  start.setUTCFullYear(day.getUTCFullYear(), interval === 'month' ? day.getUTCMonth() : 0, 1);
  return start;
}

/** The start of the bucket holding `t`. */
export function bucketFloor(t: Instant, interval: Exclude<Interval, 'all'>): Instant {
  if (interval === 'month' || interval === 'year') return BigInt(calendarStart(t, interval).getTime()) * 1000n;
  const { size, origin } = FIXED_BUCKETS[interval];
  return floorTo(t, size, origin);
}

/** Most calendar buckets a statement's window compares against; past it, the engine's calendar. */
const MOST_STARTS = 256;

/** The UTC starts of the calendar months or years that meet [from, to), the first at or before from; null past MOST_STARTS. */
export function calendarStarts(w: Window, interval: Calendar): bigint[] | null {
  const start = calendarStart(w.from, interval);
  if (!Number.isFinite(start.getTime())) return null;
  const starts: bigint[] = [];
  // Past the years a Date holds (not a window the API accepts) the time is NaN: the engine's calendar then.
  for (let ms = start.getTime(); BigInt(ms) * 1000n < w.to; ) {
    if (starts.push(BigInt(ms) * 1000n) > MOST_STARTS) return null;
    if (interval === 'month') start.setUTCMonth(start.getUTCMonth() + 1);
    else start.setUTCFullYear(start.getUTCFullYear() + 1);
    ms = start.getTime();
    if (!Number.isFinite(ms)) return null;
  }
  return starts;
}

/** A bucket and how many groups of it come one after another. */
export type BucketRun = [bucket: Instant, groups: number];

/** Adds `groups` groups of `bucket` (groups come in bucket order) to the runs: to the last run when it is that bucket's. */
export function addToRuns(runs: BucketRun[], bucket: Instant, groups = 1): void {
  const last = runs.at(-1);
  if (last?.[0] === bucket) last[1] += groups;
  else runs.push([bucket, groups]);
}

/** The runs of groups per bucket, in order, from each group's bucket or from runs (a bucket's runs in adjacent parts joined). */
export function* bucketRuns(items: Iterable<Instant | readonly [Instant, number]>): Generator<BucketRun> {
  let run: BucketRun | null = null;
  for (const item of items) {
    const bucket = typeof item === 'bigint' ? item : item[0];
    const groups = typeof item === 'bigint' ? 1 : item[1];
    if (run?.[0] === bucket) run[1] += groups;
    else {
      if (run) yield run;
      run = [bucket, groups];
    }
  }
  if (run) yield run;
}
