import { open, readFile, rm, stat } from 'node:fs/promises';
import duckdb from '@duckdb/node-bindings';
import { DuckDBTypeId, type DuckDBConnection, type DuckDBDataChunk } from '@duckdb/node-api';
import { Utf8 } from 'apache-arrow';
import { compileRows, csvRows, featureRows, type QuerySpec, type RowSelect } from '../sql/compile.ts';
import { compileCopy, CSV_COPY } from '../sql/compile-copy.ts';
import { ident } from '../sql/sql.ts';
import { sinkFor } from '../stream/arrow-columns.ts';

/**
 * One file's rows rendered once, in order-key order, as the response's COPY writes them (GeoJSON
 * Features as FEATURE_COPY: a comma before each, a newline after; CSV lines as CSV_COPY): row i is `text[offsets[i], offsets[i + 1])` and
 * its time key (epoch µs) is `keys[i]`, so any window of the file is one contiguous byte range.
 */
export interface RenderedText {
  text: Buffer;
  keys: BigInt64Array;
  offsets: Float64Array;
}

/** A response's select with the time key before it (the same expressions as the response's), and `extra` fields after. */
const keyed =
  (select: RowSelect, timeColumn: string, extra: string | null = null): RowSelect =>
  (spec, params) => {
    const { fields, join } = select(spec, params);
    return { fields: `epoch_us(t.${ident(timeColumn)}) AS k, ${fields}${extra ? `, ${extra}` : ''}`, join };
  };

/**
 * How a rendering reads its file's rows in order key: sorted by DuckDB, or as stored (a file stored in
 * order key: no sort holding the whole file's text at once).
 */
export type RenderOrder = 'sort' | 'stored';

/** The whole file's rows in order key, the key first: only a dataset with a time axis is rendered. */
function keyedRows(spec: QuerySpec, file: string, select: RowSelect, extra: string | null, order: RenderOrder) {
  const time = spec.descriptor.time;
  if (!time) throw new Error('only a dataset with a time axis is rendered');
  return compileRows({ spec, files: [file], select: keyed(select, time.column, extra), from: null, to: null, order });
}

/** A file's rows rendered elsewhere than in memory: their keys and offsets, and how many bytes their text is. */
export type RenderedRows = Omit<RenderedText, 'text'> & { bytes: number };

/**
 * The whole file's Features and keys, read from DuckDB's vectors as bytes (as featureBytes does),
 * ordered by the order key, streamed a chunk at a time (no result held whole in DuckDB). Only for
 * files stored in order key, where this order is the one a window of the file is sent in. `extra`
 * fields (the filter columns) are read in the same pass, row for row: `columns`, one array each.
 */
export async function renderFeatures(c: DuckDBConnection, spec: QuerySpec, file: string, extra: string | null = null): Promise<RenderedText & { columns: unknown[][] }> {
  const parts: Buffer[] = [];
  const rows = (await featureParts(c, spec, file, extra, (part) => (parts.push(part), true)))!;
  return { ...rows, text: Buffer.concat(parts) };
}

/**
 * As renderFeatures, each chunk's Features appended to `target` as it comes, so no file's text is
 * held whole (a day's Features are 8–10 MB, twice over while joined). Null: `hold`, told the bytes
 * written so far before each chunk, refused them (the file then holds part of the text).
 */
export async function writeFeatures(c: DuckDBConnection, spec: QuerySpec, file: string, extra: string | null, target: string, hold: (bytes: number) => boolean, order: RenderOrder = 'sort'): Promise<(RenderedRows & { columns: unknown[][] }) | null> {
  const out = await open(target, 'w');
  try {
    return await featureParts(c, spec, file, extra, async (part, bytes) => hold(bytes) && (await out.writeFile(part), true), order);
  } finally {
    await out.close();
  }
}

/** The file's Features a chunk at a time to `put` (with the bytes so far, this chunk's included); null once it answers false. */
async function featureParts(c: DuckDBConnection, spec: QuerySpec, file: string, extra: string | null, put: (part: Buffer, bytes: number) => boolean | Promise<boolean>, order: RenderOrder = 'sort'): Promise<(RenderedRows & { columns: unknown[][] }) | null> {
  const q = keyedRows(spec, file, featureRows, extra, order);
  const result = await c.stream(q.sql, q.params);
  if (result.columnCount < 2 || result.columnTypeId(1) !== DuckDBTypeId.VARCHAR) throw new Error('the rendering select must give a key and one VARCHAR column');
  const keys: bigint[] = [];
  const offsets: number[] = [0];
  const columns: unknown[][] = Array.from({ length: result.columnCount - 2 }, () => []);
  for (let chunk: DuckDBDataChunk | null; (chunk = await result.fetchChunk()) && chunk.rowCount > 0; ) {
    chunk.getColumnValues(0).forEach((k) => keys.push(k as bigint));
    for (const [i, column] of columns.entries()) for (const v of chunk.getColumnValues(i + 2)) column.push(v);
    if (!(await put(chunkFeatures(chunk, offsets), offsets.at(-1)!))) return null;
  }
  return { keys: BigInt64Array.from(keys), offsets: Float64Array.from(offsets), columns, bytes: offsets.at(-1)! };
}

/** A chunk's Features, each after a comma and before a newline; each row's end offset appended to `offsets`. */
function chunkFeatures(chunk: DuckDBDataChunk, offsets: number[]): Buffer {
  const rows = chunk.rowCount;
  const base = offsets.at(-1)!;
  const sink = sinkFor(new Utf8(), rows);
  sink.put(duckdb.data_chunk_get_vector(chunk.chunk, 1), rows, 0, rows, 0);
  const data = sink.take(rows);
  const out = Buffer.allocUnsafe(data.valueOffsets[rows]! - data.valueOffsets[0]! + 2 * rows);
  let at = 0;
  for (let r = 0; r < rows; r++) {
    out[at++] = 0x2c; // ','
    out.set((data.values as Uint8Array).subarray(data.valueOffsets[r]!, data.valueOffsets[r + 1]!), at);
    at += data.valueOffsets[r + 1]! - data.valueOffsets[r]!;
    out[at++] = 0x0a; // '\n'
    offsets.push(base + at);
  }
  return out.subarray(0, at);
}

/** Where a CSV rendering's scratch copy is written, and the disk budget it is counted in as it grows. */
export interface CsvScratch {
  /** The copy's path, under `dir` (the engine's TEMP_DIR: DuckDB writes nowhere else). */
  scratch: string;
  dir: string;
  /** Told the copy's size as DuckDB writes it; false (past the budget) stops the copy. */
  hold(bytes: number): boolean;
}

/** How often the scratch copy's size is looked at while DuckDB writes it. */
const WATCH_MS = 10;

/**
 * The whole file's CSV lines and keys, as the response's COPY writes them (DuckDB's own CSV writer,
 * so formatting and quoting stay native), ordered by the order key. The key is written as the first
 * field of each line through a scratch copy, then cut off: a BIGINT is never quoted. Null: the
 * copy grew past the budget (stopped there); the copy is removed either way.
 */
export async function renderCsv(c: DuckDBConnection, spec: QuerySpec, file: string, s: CsvScratch, order: RenderOrder = 'sort'): Promise<RenderedText | null> {
  let [done, past] = [false, false];
  const look = async () => {
    const bytes = await stat(s.scratch).then((x) => x.size, () => 0);
    // Again at each look: an interrupt that reaches the statement while it is prepared is lost.
    if (done || s.hold(bytes)) return;
    past = true;
    c.interrupt();
  };
  const watch = setInterval(() => void look(), WATCH_MS);
  try {
    const q = compileCopy(keyedRows(spec, file, csvRows, null, order), CSV_COPY, s.scratch, s.dir);
    await c.run(q.sql, q.params).finally(() => (done = true)).catch((e: unknown) => {
      if (!past) throw e;
    });
    clearInterval(watch);
    if (past || !s.hold((await stat(s.scratch)).size)) return null;
    return splitKeyed(await readFile(s.scratch));
  } finally {
    clearInterval(watch);
    await rm(s.scratch, { force: true });
  }
}

/** Lines `key,fields…\n` split into keys and the lines without their key; a newline inside quotes is the field's. */
function splitKeyed(copy: Buffer): RenderedText {
  const text = Buffer.allocUnsafe(copy.length);
  const keys: bigint[] = [];
  const offsets: number[] = [0];
  let at = 0;
  for (let start = 0; start < copy.length; ) {
    const comma = copy.indexOf(0x2c, start);
    // A row without a time key (an empty first field) cannot be placed in a window.
    if (comma <= start) throw new Error('a rendered CSV line without its key');
    keys.push(BigInt(copy.toString('latin1', start, comma)));
    let end = comma + 1;
    for (let quoted = false; end < copy.length && (quoted || copy[end] !== 0x0a); end++) if (copy[end] === 0x22) quoted = !quoted;
    if (end >= copy.length) throw new Error('a rendered CSV line without its end');
    at += copy.copy(text, at, comma + 1, end + 1);
    offsets.push(at);
    start = end + 1;
  }
  return { text: text.subarray(0, at), keys: BigInt64Array.from(keys), offsets: Float64Array.from(offsets) };
}

/** First row whose key is ≥ `key` (keys ascending). */
export function lowerBound(keys: BigInt64Array, key: bigint): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Rows [first, end) of the window [from, to) (null: open). */
export function windowRows(keys: BigInt64Array, from: bigint | null, to: bigint | null): [number, number] {
  const first = from === null ? 0 : lowerBound(keys, from);
  const end = to === null ? keys.length : lowerBound(keys, to);
  return [first, Math.max(first, end)];
}
