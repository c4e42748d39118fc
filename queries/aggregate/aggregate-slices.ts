import type { Sources } from '../sources/preflight.ts';
import type { Instant } from '../instant.ts';
import type { Interval } from './aggregate-shape.ts';
import type { Proven } from './compile-aggregate.ts';
import type { Window } from '../window.ts';
import { rowSlices, rowsIn } from '../sources/slices.ts';

const HOUR = 3_600_000_000n;
const DAY = 24n * HOUR;
/** 1970-01-05, the first Monday after the epoch: ISO weeks start there. */
const MONDAY = 4n * DAY;

const floorTo = (t: Instant, size: bigint, offset: bigint): Instant => t - ((((t - offset) % size) + size) % size);

/** The start of the UTC calendar month or year holding `t` (years 0–99 are years, not 1900s). */
function calendarFloor(t: Instant, interval: 'month' | 'year'): Instant {
  const ms = Number(floorTo(t, 1000n, 0n) / 1000n);
  const day = new Date(ms);
  const start = new Date(0);
  start.setUTCFullYear(day.getUTCFullYear(), interval === 'month' ? day.getUTCMonth() : 0, 1);
  return BigInt(start.getTime()) * 1000n;
}

/** The start of the bucket holding `t`: where one statement's part of the window may end without splitting a bucket. */
export function bucketFloor(t: Instant, interval: Exclude<Interval, 'all'>): Instant {
  if (interval === 'hour') return floorTo(t, HOUR, 0n);
  if (interval === 'day') return floorTo(t, DAY, 0n);
  if (interval === 'week') return floorTo(t, 7n * DAY, MONDAY);
  return calendarFloor(t, interval);
}

/**
 * The window in at most `n` consecutive parts of about equal rows over the listed partitions,
 * each ending on a bucket start, so every group lies wholly in one part and the parts' groups,
 * concatenated in order, are the window's. `all` is one bucket: one part.
 */
export function bucketSlices(w: Window, sources: Sources, n: number, interval: Interval): Window[] {
  if (interval === 'all' || n <= 1) return [w];
  return cutAt(w, rowCuts(w, sources, n).map((t) => bucketFloor(t, interval)));
}

/** Where the window's row-balanced slices start, but the first. */
const rowCuts = (w: Window, sources: Sources, n: number): Instant[] =>
  rowSlices(w, sources, n)
    .slice(1)
    .map((s) => s.from);

/** The window cut at `cuts` (in order) that fall inside it, without empty parts. */
function cutAt(w: Window, cuts: readonly Instant[]): Window[] {
  const bounds = [w.from, ...cuts.filter((t) => t > w.from && t < w.to), w.to].filter((t, i, all) => i === 0 || t > all[i - 1]!);
  return bounds.slice(1).map((to, i) => ({ from: bounds[i]!, to }));
}

/**
 * The window in at most `n` parts of about equal rows cut anywhere, a bucket's groups then in
 * several parts to be merged (aggregate-merge.ts), when its bucket-aligned parts would be fewer
 * (`all`, a year over a year: one bucket, one part, one thread); null when those are as many.
 */
export function mergedSlices(w: Window, sources: Sources, n: number, interval: Interval): Window[] | null {
  if (n <= 1) return null;
  const aligned = bucketSlices(w, sources, n, interval).length;
  if (aligned >= n) return null;
  const parts = cutAt(w, rowCuts(w, sources, n));
  return parts.length > aligned ? parts : null;
}

/** Sixteenths of a part's rows: the steps its first piece is cut in. */
const STEPS = 16;

/**
 * The parts a connection each, run in turn: the first part's first `rows` or so alone first, when
 * some of it is left. Their groups alone may already be too many to merge: the run then stops
 * before the others end.
 */
export function probedLanes(parts: readonly Window[], sources: Sources, rows: number): Window[][] {
  const lanes = parts.map((p) => [p]);
  const first = parts[0];
  const total = first ? rowsIn(sources, first) : 0;
  const steps = total > 0 ? Math.ceil((STEPS * rows) / total) : STEPS;
  if (!first || steps >= STEPS) return lanes;
  const probe = { from: first.from, to: rowSlices(first, sources, STEPS)[steps]!.from };
  if (probe.to > first.from && probe.to < first.to) lanes[0] = [probe, { from: probe.to, to: first.to }];
  return lanes;
}

/** The files of the partitions that overlap `w`. */
export const filesIn = (sources: Sources, w: Window): string[] =>
  sources.partitions.filter((p) => p.start < w.to && p.end > w.from).flatMap((p) => p.files.map((f) => f.path));

/** What holds for every one of `files` (FileFacts): nothing when any was not inspected. */
export function provenFor(sources: Pick<Sources, 'factsByFile'>, files: readonly string[]): Proven {
  const facts = files.map((f) => sources.factsByFile?.get(f));
  if (facts.length === 0 || facts.some((x) => x === undefined)) return { common: new Set(), inGrid: false };
  const known = facts as NonNullable<(typeof facts)[number]>[];
  return { common: new Set(known[0]!.common.filter((m) => known.every((x) => x.common.includes(m)))), inGrid: known.every((x) => x.inGrid) };
}
