import type { Sources } from '../files/preflight.ts';
import type { Window } from '../window.ts';

/** Below this many rows (estimated from the files' row counts) a window is not worth a second statement. */
const SPLIT_MIN_ROWS = 10_000;

/** How many time slices a whole-window copy is worth: `most` (one per connection it may use) when it has enough rows, else one. */
export function sliceCount(w: Window | null, sources: Sources, most: number): number {
  return w && w.to - w.from > 1n && estimatedRows(sources, w) >= SPLIT_MIN_ROWS ? most : 1;
}

/** Rows of the listed files that fall in the window, assuming they spread evenly over their partitions. */
export function estimatedRows(sources: Sources, w: Window): number {
  const parts = sources.partitions;
  if (sources.fileRows === null || parts.length === 0) return 0;
  const span = parts.at(-1)!.end - parts[0]!.start;
  const covered = overlap(w, sources);
  return span <= 0n ? 0 : (sources.fileRows * Number(covered.to - covered.from)) / Number(span);
}

/** The part of the window the listed partitions cover (the window itself when none is listed). */
export function overlap(w: Window, sources: Sources): Window {
  const parts = sources.partitions;
  if (parts.length === 0) return w;
  const from = parts[0]!.start > w.from ? parts[0]!.start : w.from;
  const to = parts.at(-1)!.end < w.to ? parts.at(-1)!.end : w.to;
  return from < to ? { from, to } : w;
}

/** [from, to) cut into `n` consecutive slices of equal duration. */
export function timeSlices(w: Window, n: number): Window[] {
  const step = (w.to - w.from) / BigInt(n);
  return Array.from({ length: n }, (_, i) => ({ from: w.from + step * BigInt(i), to: i === n - 1 ? w.to : w.from + step * BigInt(i + 1) }));
}
