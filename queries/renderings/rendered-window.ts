import type { RowFilter } from '../sql/filter-sql.ts';
import { matchingRuns } from './render-filter.ts';
import { lowerBound } from './render-file.ts';
import { asRecords, indexOf, lowerKey, startAt, type Records, type RenderedEntry } from './render-records.ts';

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
const rowOf = (r: Records, b: Bound) => ('at' in b ? b.at : r.lo + lowerKey(r, b.lo - r.lo, b.hi - r.lo, b.key));

/** Bytes [start, end) of one rendering's file; throws when it is shorter. */
export type Reader = (start: number, end: number) => Promise<Buffer>;

/** Records [lo, hi] (the row at hi too, when there is one: it says where the row before it ends). */
async function readRecords(read: Reader, e: RenderedEntry, lo: number, hi: number): Promise<Records> {
  return asRecords(e, lo, await read(e.text + lo * e.record, e.text + Math.min(hi + 1, e.rows) * e.record));
}

/** The row of each bound and where its text starts (the text's end past the last row). */
async function settle(read: Reader, e: RenderedEntry, bounds: readonly Bound[]): Promise<[number, number][]> {
  const blocks = bounds.filter((b): b is Extract<Bound, { lo: number }> => !('at' in b));
  // Bounds near each other (a short window) are found in one read.
  const lo = Math.min(...blocks.map((b) => b.lo));
  const hi = Math.max(...blocks.map((b) => b.hi));
  const one = blocks.length > 1 && (hi - lo) * e.record <= NEAR_BYTES ? await readRecords(read, e, lo, hi) : null;
  return Promise.all(
    bounds.map(async (b) => {
      if ('at' in b) return [b.at, b.at === 0 ? 0 : e.text] as [number, number];
      const r = one ?? (await readRecords(read, e, b.lo, b.hi));
      const row = rowOf(r, b);
      return [row, startAt(r, row - r.lo)] as [number, number];
    }),
  );
}

/** Records read at once for two bounds at most this far apart. */
const NEAR_BYTES = 64 * 1024;

/**
 * The byte ranges of one rendering holding the window's rows (the filters' kept runs), and how many
 * rows they hold: an unfiltered window reads the records of the blocks its bounds fall in; a filtered
 * one every record from its first row's block to its last's.
 */
export async function locate(read: Reader, e: RenderedEntry, w: RenderWindow): Promise<{ ranges: ByteRange[]; returned: number }> {
  const [from, to] = [bound(e, w.from, 0), bound(e, w.to, e.rows)];
  if (lowOf(from) >= e.rows || highOf(to) === 0) return { ranges: [], returned: 0 };
  if (w.filters.length === 0) {
    const [[first, start], [end, stop]] = (await settle(read, e, [from, to])) as [[number, number], [number, number]];
    return first < end ? { ranges: [[start, stop]], returned: end - first } : { ranges: [], returned: 0 };
  }
  const r = await readRecords(read, e, lowOf(from), highOf(to));
  const [first, end] = [rowOf(r, from), rowOf(r, to)];
  if (first >= end) return { ranges: [], returned: 0 };
  const [lo, hi] = [first - r.lo, end - r.lo];
  const runs = matchingRuns(indexOf(e, r, lo, hi), w.filters, 0, hi - lo);
  return { ranges: runs.map(([s, x]) => [startAt(r, lo + s), startAt(r, lo + x)] as const), returned: runs.reduce((n, [s, x]) => n + x - s, 0) };
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
 * one read from the first kept byte to the last), each span's kept bytes one buffer.
 */
export async function* rangePieces(read: Reader, ranges: readonly ByteRange[], piece: number): AsyncGenerator<Buffer> {
  for (const span of spans(ranges, piece)) {
    const bytes = await read(span.start, span.end);
    yield span.kept.length === 1 ? bytes : kept(bytes, span);
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
