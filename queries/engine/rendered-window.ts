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

/**
 * The rows of one rendered file in the window, or null when its rendering is gone (evicted while
 * being read). One byte range is read, from the first row kept to the last; the rows the filters
 * drop between them are left out in memory.
 */
export async function renderedRows(entry: RenderedEntry, w: RenderWindow): Promise<{ bytes: Buffer; returned: number } | null> {
  const [first, end] = windowRows(entry.keys, w.from, w.to);
  const runs = w.filters.length === 0 ? (first < end ? [[first, end] as [number, number]] : []) : matchingRuns(entry.index!, w.filters, first, end);
  if (runs.length === 0) return { bytes: Buffer.alloc(0), returned: 0 };
  const base = entry.offsets[runs[0]![0]]!;
  const range = await readRange(entry.file, base, entry.offsets[runs.at(-1)![1]]!);
  if (!range) return null;
  const returned = runs.reduce((n, [s, e]) => n + e - s, 0);
  if (runs.length === 1) return { bytes: range, returned };
  const out = Buffer.allocUnsafe(runs.reduce((n, [s, e]) => n + entry.offsets[e]! - entry.offsets[s]!, 0));
  let at = 0;
  for (const [s, e] of runs) at += range.copy(out, at, entry.offsets[s]! - base, entry.offsets[e]! - base);
  return { bytes: out, returned };
}

/** Bytes [start, end) of a rendering, or null when it is gone (evicted while being read). */
async function readRange(file: string, start: number, end: number): Promise<Buffer | null> {
  const handle = await open(file, 'r').catch(() => null);
  if (!handle) return null;
  try {
    const out = Buffer.allocUnsafe(end - start);
    const { bytesRead } = await handle.read(out, 0, out.length, start);
    return bytesRead === out.length ? out : null;
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}
