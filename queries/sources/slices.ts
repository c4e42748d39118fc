import type { Sources } from './preflight.ts';
import type { Instant } from '../instant.ts';
import type { Window } from '../window.ts';

/** Below this many rows (estimated from the files' row counts) a window is not worth a second statement. */
const SPLIT_MIN_ROWS = 10_000;

/** How many time slices a whole-window copy is worth: `most` (one per connection it may use) when it has enough rows, else one. */
export function sliceCount(w: Window | null, sources: Sources, most: number): number {
  return w && w.to - w.from > 1n && rowsIn(sources, w) >= SPLIT_MIN_ROWS ? most : 1;
}

/** Rows of the listed files that fall in the window, assuming they spread evenly over all partitions. */
function estimatedRows(sources: Sources, w: Window): number {
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

interface Stretch {
  from: Instant;
  to: Instant;
  rows: number;
}

/** Each listed partition's part of `w` and the rows it likely holds there (spread evenly over the partition); null when a file's count is unknown or partitions overlap. */
function stretches(w: Window, sources: Sources): Stretch[] | null {
  const out: Stretch[] = [];
  for (const p of sources.partitions) {
    const from = p.start > w.from ? p.start : w.from;
    const to = p.end < w.to ? p.end : w.to;
    if (from >= to) continue;
    if (out.length > 0 && from < out.at(-1)!.to) return null;
    let rows = 0;
    for (const f of p.files) {
      const n = sources.rowsByFile.get(f.path);
      if (n === undefined) return null;
      rows += n;
    }
    out.push({ from, to, rows: (rows * Number(to - from)) / Number(p.end - p.start) });
  }
  return out;
}

/**
 * Rows of the listed files in `w` by their footer counts, each partition's spread evenly over it
 * (a season's rows are seldom spread over the year); spread over all partitions when a count is
 * unknown or partitions overlap.
 */
export function rowsIn(sources: Sources, w: Window): number {
  const parts = stretches(w, sources);
  return parts ? parts.reduce((sum, s) => sum + s.rows, 0) : estimatedRows(sources, w);
}

/**
 * [from, to) of the listed partitions cut into `n` consecutive slices of about equal rows, by the
 * files' footer counts, so side-by-side statements finish together (a year's rows are seldom
 * spread evenly over its days); slices of equal duration when a count is unknown.
 */
export function rowSlices(w: Window, sources: Sources, n: number): Window[] {
  const span = overlap(w, sources);
  const parts = stretches(span, sources);
  const total = parts?.reduce((sum, s) => sum + s.rows, 0) ?? 0;
  if (n <= 1 || !parts || !(total > 0)) return timeSlices(span, n);
  const cuts: Instant[] = [];
  let before = 0;
  for (const s of parts) {
    while (cuts.length < n - 1 && s.rows > 0 && before + s.rows >= (total * (cuts.length + 1)) / n) {
      const share = ((total * (cuts.length + 1)) / n - before) / s.rows;
      const at = s.from + BigInt(Math.floor(Number(s.to - s.from) * share));
      cuts.push(at < s.from ? s.from : at > s.to ? s.to : at);
    }
    before += s.rows;
  }
  while (cuts.length < n - 1) cuts.push(span.to);
  const bounds = [span.from, ...cuts, span.to];
  return bounds.slice(1).map((to, i) => ({ from: bounds[i]!, to }));
}
