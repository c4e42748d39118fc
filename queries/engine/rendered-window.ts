import { open, type FileHandle } from 'node:fs/promises';
import type { RowFilter } from '../sql/filter-sql.ts';
import { matchingRuns } from './render-filter.ts';
import { lowerBound } from './render-file.ts';
import { decodeRecords, type Records, type RenderedEntry } from './render-records.ts';

export type { RenderedEntry } from './render-records.ts';

/** A window as a rendering answers it: the time range (null: open) and the request's row filters. */
export interface RenderWindow {
  from: bigint | null;
  to: bigint | null;
  filters: readonly RowFilter[];
}

/** Bytes [start, end) of a rendering's text. */
export type ByteRange = readonly [number, number];

/** Where the first row of key ≥ a bound lies: known (`at`), or among rows [lo, hi] (hi when none of [lo, hi) is). */
type Bound = { at: number } | { lo: number; hi: number; key: bigint };

function bound(e: RenderedEntry, key: bigint | null, open: number): Bound {
  if (key === null) return { at: open };
  if (e.rows === 0 || key <= e.sparse[0]!) return { at: 0 };
  if (key > e.last) return { at: e.rows };
  const j = lowerBound(e.sparse, key);
  return { lo: (j - 1) * e.stride, hi: Math.min(j * e.stride, e.rows), key };
}

const lowOf = (b: Bound) => ('at' in b ? b.at : b.lo);
const highOf = (b: Bound) => ('at' in b ? b.at : b.hi);

/** The bound's row, from records read over [lo, hi]. */
const rowOf = (r: Records, b: Bound) => ('at' in b ? b.at : b.lo + lowerBound(r.keys.subarray(b.lo - r.lo, b.hi - r.lo), b.key));

/** Records [lo, hi] (the row at hi too, when there is one: it says where the row before it ends). */
async function readRecords(handle: FileHandle, e: RenderedEntry, lo: number, hi: number): Promise<Records> {
  const bytes = Buffer.allocUnsafe((Math.min(hi + 1, e.rows) - lo) * e.record);
  const { bytesRead } = await handle.read(bytes, 0, bytes.length, e.text + lo * e.record);
  if (bytesRead !== bytes.length) throw new Error('a rendering shorter than its records');
  return decodeRecords(e, lo, bytes);
}

/** The bound's row and where its text starts (the text's end past the last row). */
async function settle(handle: FileHandle, e: RenderedEntry, b: Bound): Promise<[number, number]> {
  if ('at' in b) return [b.at, b.at === 0 ? 0 : b.at === e.rows ? e.text : Number.NaN];
  const r = await readRecords(handle, e, b.lo, b.hi);
  const row = rowOf(r, b);
  return [row, r.starts[row - r.lo]!];
}

/**
 * The byte ranges of one rendering holding the window's rows (the filters' kept runs), and how many
 * rows they hold: an unfiltered window reads the records of the blocks its bounds fall in; a filtered
 * one every record from its first row's block to its last's.
 */
export async function locate(handle: FileHandle, e: RenderedEntry, w: RenderWindow): Promise<{ ranges: ByteRange[]; returned: number }> {
  const [from, to] = [bound(e, w.from, 0), bound(e, w.to, e.rows)];
  if (lowOf(from) >= e.rows || highOf(to) === 0) return { ranges: [], returned: 0 };
  if (w.filters.length === 0) {
    const [[first, start], [end, stop]] = [await settle(handle, e, from), await settle(handle, e, to)];
    return first < end ? { ranges: [[start, stop]], returned: end - first } : { ranges: [], returned: 0 };
  }
  const r = await readRecords(handle, e, lowOf(from), highOf(to));
  const [first, end] = [rowOf(r, from), rowOf(r, to)];
  const runs = first < end ? matchingRuns(r.index!, w.filters, first - r.lo, end - r.lo) : [];
  return { ranges: runs.map(([s, x]) => [r.starts[s]!, r.starts[x]!] as const), returned: runs.reduce((n, [s, x]) => n + x - s, 0) };
}

/** As locate, opening the rendering for it. */
export async function locateIn(e: RenderedEntry, w: RenderWindow): Promise<{ ranges: ByteRange[]; returned: number }> {
  const handle = await open(e.file, 'r');
  try {
    return await locate(handle, e, w);
  } finally {
    await handle.close();
  }
}

/** A read of [start, end) and the ranges it keeps (each inside it). */
interface Span {
  start: number;
  end: number;
  kept: ByteRange[];
}

/** The ranges as reads of at most `piece` bytes: a longer range in several, nearby ranges in one (the rows between read and left out). */
function spans(ranges: readonly ByteRange[], piece: number): Span[] {
  const out: Span[] = [];
  for (const [a, b] of ranges) {
    for (let at = a; at < b; at += piece) {
      const part = [at, Math.min(b, at + piece)] as const;
      const last = out.at(-1);
      if (last && part[1] - last.start <= piece) (last.end = part[1]), last.kept.push(part);
      else out.push({ start: part[0], end: part[1], kept: [part] });
    }
  }
  return out;
}

/**
 * The ranges of one rendering, read in order a span of at most `piece` bytes at a time (Infinity:
 * one read from the first kept byte to the last), each span's kept bytes one buffer. Throws when
 * the file is gone or shorter than its offsets.
 */
export async function* rangePieces(file: string, ranges: readonly ByteRange[], piece: number): AsyncGenerator<Buffer> {
  if (ranges.length === 0) return;
  const handle = await open(file, 'r');
  try {
    for (const span of spans(ranges, piece)) {
      const read = Buffer.allocUnsafe(span.end - span.start);
      const { bytesRead } = await handle.read(read, 0, read.length, span.start);
      if (bytesRead !== read.length) throw new Error('a rendering shorter than its offsets');
      yield span.kept.length === 1 ? read : kept(read, span);
    }
  } finally {
    await handle.close();
  }
}

/** A span's kept ranges cut out of its read, joined. */
function kept(read: Buffer, span: Span): Buffer {
  const out = Buffer.allocUnsafe(span.kept.reduce((n, [a, b]) => n + b - a, 0));
  let at = 0;
  for (const [a, b] of span.kept) at += read.copy(out, at, a - span.start, b - span.start);
  return out;
}

/** Every piece of `pieces` as one buffer (one piece: itself, not copied). */
export async function gathered(pieces: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of pieces) parts.push(part);
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/**
 * The rows of one rendered file in the window, read whole, or null when its rendering is gone. One
 * byte range is read, from the first row kept to the last; the rows the filters drop between them
 * are left out in memory.
 */
export async function renderedRows(entry: RenderedEntry, w: RenderWindow): Promise<{ bytes: Buffer; returned: number } | null> {
  const located = await locateIn(entry, w).catch(() => null);
  const bytes = located && (await gathered(rangePieces(entry.file, located.ranges, Infinity)).catch(() => null));
  return bytes && { bytes, returned: located!.returned };
}
