import { open } from 'node:fs/promises';
import type { RowFilter } from '../sql/filter-sql.ts';
import { matchingRuns, type FilterIndex } from './render-filter.ts';
import { windowRows } from './render-file.ts';

/** One file's rendering on disk: its rows' keys, byte offsets and filter columns in memory, the text in `file`. */
export interface RenderedEntry {
  file: string;
  keys: BigInt64Array;
  offsets: Float64Array;
  /** Null: the dataset's filters are not indexed; only unfiltered windows are answered. */
  index: FilterIndex | null;
}

/** A window as a rendering answers it: the time range (null: open) and the request's row filters. */
export interface RenderWindow {
  from: bigint | null;
  to: bigint | null;
  filters: readonly RowFilter[];
}

/** Bytes [start, end) of a rendering's text. */
export type ByteRange = readonly [number, number];

/** The byte ranges of one rendered file holding the window's rows (the filters' kept runs), and how many rows they hold. */
export function windowRanges(entry: RenderedEntry, w: RenderWindow): { ranges: ByteRange[]; returned: number } {
  const [first, end] = windowRows(entry.keys, w.from, w.to);
  const runs = w.filters.length === 0 ? (first < end ? [[first, end] as const] : []) : matchingRuns(entry.index!, w.filters, first, end);
  return { ranges: runs.map(([s, e]) => [entry.offsets[s]!, entry.offsets[e]!] as const), returned: runs.reduce((n, [s, e]) => n + e - s, 0) };
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
  const { ranges, returned } = windowRanges(entry, w);
  const bytes = await gathered(rangePieces(entry.file, ranges, Infinity)).catch(() => null);
  return bytes && { bytes, returned };
}
