import { appendFile } from 'node:fs/promises';
import type { FilterIndex } from './render-filter.ts';

/** Rows between two keys kept in memory: a window's bound is found by reading the records of one such block. */
export const STRIDE = 256;

/** The records' fixed part: the row's order key (i64) and where its text starts (f64). */
const KEYED = 16;

/**
 * One file's rendering on disk: its text, then one fixed-size record per row, in the text's order:
 * the order key (i64), the offset of the row's text (f64) and, when its filters are indexed, the
 * point's latitude and longitude (f64), 1 when the point is null (u8), and each text filter column's
 * code (u16). Only every STRIDE-th key, the codes' values and sizes stay in memory (about 0.03 bytes a
 * row), whatever the budget holds.
 */
export interface RenderedEntry {
  file: string;
  rows: number;
  /** Bytes of text: the records start here. */
  text: number;
  /** Bytes of one record. */
  record: number;
  /** Rows between two keys kept in memory (STRIDE). */
  stride: number;
  /** The key of rows 0, stride, 2·stride, …. */
  sparse: BigInt64Array;
  /** The last row's key. */
  last: bigint;
  /** Each indexed text filter column and its values' codes (from 1; 0 is null); null: filters not indexed (only unfiltered windows are answered). */
  columns: { name: string; values: Map<string, number> }[] | null;
  /** Bytes on disk: text and records. */
  bytes: number;
}

/** What a rendering made in memory before its records are written. */
export interface RenderedRowsOf {
  keys: BigInt64Array;
  offsets: Float64Array;
  index: FilterIndex | null;
}

const recordBytes = (index: FilterIndex | null) => (index ? KEYED + 17 + 2 * index.codes.size : KEYED);

/** The records of `rows`, in row order. */
function records(r: RenderedRowsOf): Buffer {
  const size = recordBytes(r.index);
  const out = Buffer.alloc(size * r.keys.length);
  const codes = [...(r.index?.codes.values() ?? [])];
  for (let i = 0, at = 0; i < r.keys.length; i++, at += size) {
    out.writeBigInt64LE(r.keys[i]!, at);
    out.writeDoubleLE(r.offsets[i]!, at + 8);
    if (!r.index) continue;
    out.writeDoubleLE(r.index.lat[i]!, at + 16);
    out.writeDoubleLE(r.index.lon[i]!, at + 24);
    out[at + 32] = r.index.nullPoint[i]!;
    codes.forEach((c, k) => out.writeUInt16LE(c.rows[i]!, at + 33 + 2 * k));
  }
  return out;
}

/** The bytes the records of a rendering of `rows` rows take on disk. */
export const recordsSize = (rows: number, index: FilterIndex | null): number => rows * recordBytes(index);

/** Appends the rows' records to `file` (its text already written, `text` bytes) and gives the entry kept in memory. */
export async function writeRecords(file: string, text: number, r: RenderedRowsOf, stride = STRIDE): Promise<RenderedEntry> {
  const written = records(r);
  await appendFile(file, written);
  const rows = r.keys.length;
  const sparse = new BigInt64Array(Math.ceil(rows / stride));
  for (let j = 0; j < sparse.length; j++) sparse[j] = r.keys[j * stride]!;
  const columns = r.index && [...r.index.codes].map(([name, c]) => ({ name, values: c.values }));
  return { file, rows, text, record: recordBytes(r.index), stride, sparse, last: rows > 0 ? r.keys[rows - 1]! : 0n, columns, bytes: text + written.length };
}

/** Records read from row `lo` on, decoded only where looked at. */
export interface Records {
  lo: number;
  /** Records read. */
  n: number;
  bytes: Buffer;
  record: number;
  /** Where the text ends, when the last record read is the file's last row; else null. */
  end: number | null;
}

export const asRecords = (e: RenderedEntry, lo: number, bytes: Buffer): Records => {
  const n = bytes.length / e.record;
  return { lo, n, bytes, record: e.record, end: lo + n === e.rows ? e.text : null };
};

/** The key of the i-th record read. */
export const keyAt = (r: Records, i: number): bigint => r.bytes.readBigInt64LE(i * r.record);

/** Where the i-th record read's text starts; at `n`, the text's end (the file's last row read). */
export const startAt = (r: Records, i: number): number => (i === r.n ? (r.end ?? Number.NaN) : r.bytes.readDoubleLE(i * r.record + 8));

/** The first i in [lo, hi) at which `below(i)` is false (hi when none is), `below` being true and then false along the range. */
export function firstNotBelow(lo: number, hi: number, below: (i: number) => boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (below(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first of records [lo, hi) read whose key is ≥ `key` (hi when none is). */
export const lowerKey = (r: Records, lo: number, hi: number, key: bigint): number => firstNotBelow(lo, hi, (i) => keyAt(r, i) < key);

/** The filter columns of records [first, end) read, as an index of end − first rows. */
export function indexOf(e: RenderedEntry, r: Records, first: number, end: number): FilterIndex {
  const n = end - first;
  const index: FilterIndex = { codes: new Map(e.columns!.map((c) => [c.name, { values: c.values, rows: new Uint16Array(n) }])), lat: new Float64Array(n), lon: new Float64Array(n), nullPoint: new Uint8Array(n) };
  const codes = [...index.codes.values()];
  for (let i = 0, at = first * r.record; i < n; i++, at += r.record) {
    index.lat[i] = r.bytes.readDoubleLE(at + 16);
    index.lon[i] = r.bytes.readDoubleLE(at + 24);
    index.nullPoint[i] = r.bytes[at + 32]!;
    codes.forEach((c, k) => (c.rows[i] = r.bytes.readUInt16LE(at + 33 + 2 * k)));
  }
  return index;
}
