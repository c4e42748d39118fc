import { open } from 'node:fs/promises';
import duckdb from '@duckdb/node-bindings';
import { DuckDBTypeId, type DuckDBConnection, type DuckDBDataChunk } from '@duckdb/node-api';
import { Utf8 } from 'apache-arrow';
import { compileRows, featureRows, type QuerySpec, type RowSelect } from '../sql/compile.ts';
import { ident } from '../sql/sql.ts';
import { sinkFor, type ColumnSink } from '../encode/arrow-columns.ts';
import { appendKeys, CHUNK_ROWS, Growing } from './render-columns.ts';
import { filterFields, FilterIndexReader, type FilterIndex } from './render-filter.ts';
import { firstNotBelow } from './render-records.ts';

/**
 * One file's rows rendered once, in order-key order, as the response's COPY writes them (GeoJSON
 * Features as FEATURE_COPY: a comma before each, a newline after; CSV lines as CSV_COPY), written
 * elsewhere: row i is bytes `[offsets[i], offsets[i + 1])` of the text and its time key (epoch µs) is
 * `keys[i]`, so any window of the file is one contiguous byte range; `bytes` of text in all.
 */
export interface RenderedRows {
  keys: BigInt64Array;
  offsets: Float64Array;
  bytes: number;
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
export function keyedRows(spec: QuerySpec, file: string, select: RowSelect, extra: string | null, order: RenderOrder) {
  const time = spec.descriptor.time;
  if (!time) throw new Error('only a dataset with a time axis is rendered');
  return compileRows({ spec, files: [file], select: keyed(select, time.column, extra), from: null, to: null, order });
}

/**
 * The whole file's Features and keys, read from DuckDB's vectors as bytes (as featureBytes does),
 * ordered by the order key, streamed a chunk at a time (no result held whole in DuckDB), each
 * chunk's Features appended to `target` as it comes, so no file's text is held whole (a day's
 * Features are 8–10 MB), and the file's FilterIndex read in the same pass, row for row, when the
 * dataset's filters are indexed. Only for files stored in order key, where this order is the one a
 * window of the file is sent in. Null: `hold`, told the bytes
 * written so far before each chunk, refused them (the file then holds part of the text).
 */
export async function writeFeatures(c: DuckDBConnection, spec: QuerySpec, file: string, target: string, hold: (bytes: number) => boolean, order: RenderOrder): Promise<(RenderedRows & { index: FilterIndex | null }) | null> {
  const out = await open(target, 'w');
  try {
    return await featureParts(c, spec, file, async (part, bytes) => hold(bytes) && (await out.writeFile(part), true), order);
  } finally {
    await out.close();
  }
}

/** The file's Features a chunk at a time to `put` (with the bytes so far, this chunk's included); null once it answers false. */
async function featureParts(c: DuckDBConnection, spec: QuerySpec, file: string, put: (part: Buffer, bytes: number) => boolean | Promise<boolean>, order: RenderOrder): Promise<(RenderedRows & { index: FilterIndex | null }) | null> {
  const fields = filterFields(spec.descriptor);
  const q = keyedRows(spec, file, featureRows, fields, order);
  const result = await c.stream(q.sql, q.params);
  if (result.columnCount < 2 || result.columnTypeId(1) !== DuckDBTypeId.VARCHAR) throw new Error('the rendering select must give a key and one VARCHAR column');
  const keys = new Growing(BigInt64Array);
  const offsets = new Growing(Float64Array);
  offsets.push(0);
  const index = fields ? new FilterIndexReader(spec.descriptor) : null;
  const sink = sinkFor(new Utf8(), CHUNK_ROWS);
  for (let chunk: DuckDBDataChunk | null; (chunk = await result.fetchChunk()) && chunk.rowCount > 0; ) {
    appendKeys(keys, chunk, 0);
    index?.add(chunk, 2);
    const part = chunkFeatures(chunk, chunk.rowCount <= CHUNK_ROWS ? sink : sinkFor(new Utf8(), chunk.rowCount), offsets);
    if (!(await put(part, offsets.array[offsets.length - 1]!))) return null;
  }
  const bytes = offsets.array[offsets.length - 1]!;
  return { keys: keys.array, offsets: offsets.array, bytes, index: index && index.index() };
}

/** A chunk's Features, each after a comma and before a newline, read through `sink`; each row's end offset appended to `offsets`. */
function chunkFeatures(chunk: DuckDBDataChunk, sink: ColumnSink, offsets: Growing<Float64Array>): Buffer {
  const rows = chunk.rowCount;
  const base = offsets.array[offsets.length - 1]!;
  sink.put(duckdb.data_chunk_get_vector(chunk.chunk, 1), rows, 0, rows, 0);
  const data = sink.take(rows);
  const out = Buffer.allocUnsafe(data.valueOffsets[rows]! - data.valueOffsets[0]! + 2 * rows);
  const ends = offsets.room(rows);
  let at = 0;
  for (let r = 0; r < rows; r++) {
    out[at++] = 0x2c; // ','
    out.set((data.values as Uint8Array).subarray(data.valueOffsets[r]!, data.valueOffsets[r + 1]!), at);
    at += data.valueOffsets[r + 1]! - data.valueOffsets[r]!;
    out[at++] = 0x0a; // '\n'
    ends[offsets.length + r] = base + at;
  }
  offsets.length += rows;
  return out.subarray(0, at);
}

/** First row whose key is ≥ `key` (keys ascending). */
export const lowerBound = (keys: BigInt64Array, key: bigint): number => firstNotBelow(0, keys.length, (i) => keys[i]! < key);
