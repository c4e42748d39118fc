import type { Sources } from '../sources/preflight.ts';
import type { Instant } from '../instant.ts';
import type { Interval } from './aggregate-shape.ts';
import type { FilesFacts } from './compile-aggregate.ts';
import type { Window } from '../window.ts';
import { rowSlices, rowsIn } from '../sources/slices.ts';
import { bucketFloor } from './buckets.ts';

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
 * The parts in queues, a connection each, run in turn: the first part's first `rows` or so alone first, when
 * some of it is left. Their groups alone may already be too many to merge: the run then stops
 * before the others end.
 */
export function probedQueues(parts: readonly Window[], sources: Sources, rows: number): Window[][] {
  const queues = parts.map((p) => [p]);
  const first = parts[0];
  const total = first ? rowsIn(sources, first) : 0;
  const steps = total > 0 ? Math.ceil((STEPS * rows) / total) : STEPS;
  if (!first || steps >= STEPS) return queues;
  const probe = { from: first.from, to: rowSlices(first, sources, STEPS)[steps]!.from };
  if (probe.to > first.from && probe.to < first.to) queues[0] = [probe, { from: probe.to, to: first.to }];
  return queues;
}

/** The files of the partitions that overlap `w`. */
export const filesIn = (sources: Sources, w: Window): string[] =>
  sources.partitions.filter((p) => p.start < w.to && p.end > w.from).flatMap((p) => p.files.map((f) => f.path));

/** What holds for every one of `files` (FileFacts): nothing when any was not inspected. */
export function factsFor(sources: Pick<Sources, 'factsByFile'>, files: readonly string[]): FilesFacts {
  const facts = files.map((f) => sources.factsByFile?.get(f));
  if (facts.length === 0 || facts.some((x) => x === undefined)) return { common: new Set(), inGrid: false };
  const known = facts as NonNullable<(typeof facts)[number]>[];
  return { common: new Set(known[0]!.common.filter((m) => known.every((x) => x.common.includes(m)))), inGrid: known.every((x) => x.inGrid) };
}
