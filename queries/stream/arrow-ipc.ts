import { open } from 'node:fs/promises';
import type { DuckDBBlobValue, DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import {
  Binary,
  Bool,
  Field,
  Float64,
  Int32,
  Int64,
  makeData,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Table,
  TimeUnit,
  Timestamp,
  Utf8,
  type DataType,
} from 'apache-arrow';
import { wireColumns, type Column, type DatasetDescriptor } from '../../datasets/index.ts';
import { GEOMETRY_COLUMN, hasColumnarGeometry } from '../sql/compile-columnar.ts';
import type { Compiled } from '../sql/compile.ts';

/** Rows per record batch: fixed, so batch boundaries (and bytes) never depend on DuckDB's chunking. */
export const ARROW_BATCH_ROWS = 16_384;

/** The end-of-stream marker of the IPC stream format: continuation, zero length. */
export const ARROW_END_OF_STREAM = Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

const TIMESTAMP = new Timestamp(TimeUnit.MICROSECOND, 'UTC');

const ARROW_TYPES: Record<Exclude<Column['type'], 'GEOMETRY'>, () => DataType> = {
  VARCHAR: () => new Utf8(),
  DOUBLE: () => new Float64(),
  INTEGER: () => new Int32(),
  BIGINT: () => new Int64(),
  BOOLEAN: () => new Bool(),
  TIMESTAMPTZ: () => TIMESTAMP,
};

/** Geometry as WKB, tagged as GeoArrow so readers that know it (GeoPandas, QGIS, DuckDB) see geometry. */
const GEOARROW = new Map([
  ['ARROW:extension:name', 'geoarrow.wkb'],
  ['ARROW:extension:metadata', '{"crs":"OGC:CRS84","crs_type":"authority_code"}'],
]);

/** The response's Arrow schema: the contract's columns and types, then `geometry`; `metadata` on the schema. */
export function arrowSchema(d: DatasetDescriptor, metadata: Readonly<Record<string, string>> = {}): Schema {
  const fields = wireColumns(d).map((c) => new Field(c.name, ARROW_TYPES[c.type as keyof typeof ARROW_TYPES](), c.nullable));
  if (hasColumnarGeometry(d)) fields.push(new Field(GEOMETRY_COLUMN, new Binary(), true, GEOARROW));
  const keys = Object.keys(metadata).sort();
  return new Schema(fields, new Map(keys.map((k) => [k, metadata[k]!])));
}

/** The length of the schema message at the start of an IPC stream (continuation, length, flatbuffer). */
const schemaMessageLength = (stream: Uint8Array) => 8 + Buffer.from(stream.buffer, stream.byteOffset, 8).readInt32LE(4);

/** The schema message that opens the response's stream. */
export function arrowSchemaMessage(schema: Schema): Buffer {
  const stream = RecordBatchStreamWriter.writeAll(new Table(schema)).toUint8Array(true);
  return Buffer.from(stream.subarray(0, schemaMessageLength(stream)));
}

/** A batch's record-batch message alone (no schema, no end marker): group files are concatenated in the response. */
function batchMessage(batch: RecordBatch): Uint8Array {
  const stream = RecordBatchStreamWriter.writeAll([batch]).toUint8Array(true);
  return stream.subarray(schemaMessageLength(stream), stream.length - ARROW_END_OF_STREAM.length);
}

/** Validity bits (null when every value is present) and the null count. */
function validityOf(values: readonly unknown[]): { nullBitmap: Uint8Array | null; nullCount: number } {
  const bits = new Uint8Array((values.length + 7) >> 3);
  let nullCount = 0;
  for (let i = 0; i < values.length; i++) {
    if (values[i] === null) nullCount++;
    else bits[i >> 3]! |= 1 << (i & 7);
  }
  return { nullBitmap: nullCount ? bits : null, nullCount };
}

/** Text as offsets and one UTF-8 buffer, encoded in one go (a buffer per value costs more than the rest of the batch). */
function textWidth(values: readonly (string | null)[]): { valueOffsets: Int32Array; data: Uint8Array } {
  const valueOffsets = new Int32Array(values.length + 1);
  for (let i = 0; i < values.length; i++) valueOffsets[i + 1] = valueOffsets[i]! + (values[i] ? Buffer.byteLength(values[i]!) : 0);
  return { valueOffsets, data: Buffer.from(values.join('')) };
}

/** Bytes (WKB) as offsets and one data buffer. */
function binaryWidth(values: readonly (Uint8Array | null)[]): { valueOffsets: Int32Array; data: Uint8Array } {
  const valueOffsets = new Int32Array(values.length + 1);
  for (let i = 0; i < values.length; i++) valueOffsets[i + 1] = valueOffsets[i]! + (values[i]?.length ?? 0);
  return { valueOffsets, data: Buffer.concat(values.filter((v) => v !== null)) };
}

/**
 * One column of a batch, built straight into Arrow buffers: apache-arrow's generic builders cost
 * several times what reading the values from DuckDB does.
 */
function columnData(type: DataType, values: unknown[]) {
  const length = values.length;
  const valid = validityOf(values);
  const fixed = <A extends { [i: number]: unknown }>(data: A, value: (v: unknown) => unknown) => {
    values.forEach((v, i) => v !== null && ((data as Record<number, unknown>)[i] = value(v)));
    return makeData({ type, length, ...valid, data } as never);
  };
  if (type instanceof Timestamp || type instanceof Int64) return fixed(new BigInt64Array(length), (v) => BigInt(v as bigint));
  if (type instanceof Float64) return fixed(new Float64Array(length), (v) => v);
  if (type instanceof Int32) return fixed(new Int32Array(length), (v) => v);
  if (type instanceof Bool) {
    const data = new Uint8Array((length + 7) >> 3);
    values.forEach((v, i) => v === true && (data[i >> 3]! |= 1 << (i & 7)));
    return makeData({ type, length, ...valid, data });
  }
  if (type instanceof Binary) return makeData({ type, length, ...valid, ...binaryWidth(values.map((v) => (v as DuckDBBlobValue | null)?.bytes ?? null)) });
  return makeData({ type: type as Utf8, length, ...valid, ...textWidth(values as (string | null)[]) });
}

/** The first `length` values of a column's pending chunks, and the chunks left (one copy of what is taken, none of the rest). */
function take(chunks: readonly unknown[][], length: number): { head: unknown[]; rest: unknown[][] } {
  const head = new Array<unknown>(length);
  let n = 0;
  let i = 0;
  for (; n < length; i++) {
    const chunk = chunks[i]!;
    const count = Math.min(chunk.length, length - n);
    for (let j = 0; j < count; j++) head[n + j] = chunk[j];
    n += count;
    if (count < chunk.length) return { head, rest: [chunk.slice(count), ...chunks.slice(i + 1)] };
  }
  return { head, rest: chunks.slice(i) };
}

function batchOf(schema: Schema, columns: unknown[][]): RecordBatch {
  const length = columns[0]?.length ?? 0;
  const children = schema.fields.map((f, i) => columnData(f.type, columns[i]!));
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length, nullCount: 0, children }));
}

/**
 * One group's rows as Arrow record batches in `target`, read from DuckDB's stream(). The client
 * library ends a failed stream as if it had finished, so the count returned is what was really
 * written: the caller compares the sum with the promised count and cuts the response when short.
 */
export async function writeArrowRows(c: DuckDBConnection, rows: Compiled, target: string, d: DatasetDescriptor, signal?: AbortSignal): Promise<number> {
  const schema = arrowSchema(d);
  const file = await open(target, 'w');
  // Values of the chunks not yet in a batch, per column.
  let pending: unknown[][][] = schema.fields.map(() => []);
  let pendingRows = 0;
  let written = 0;
  const flush = async (length: number) => {
    const taken = pending.map((chunks) => take(chunks, length));
    await file.write(batchMessage(batchOf(schema, taken.map((t) => t.head))));
    pending = taken.map((t) => t.rest);
    pendingRows -= length;
    written += length;
  };
  try {
    const result = await c.stream(rows.sql, rows.params);
    for (let chunk: DuckDBDataChunk | null; (chunk = await result.fetchChunk()) && chunk.rowCount > 0; ) {
      signal?.throwIfAborted();
      pending.forEach((p, i) => p.push(chunk!.getColumnValues(i)));
      pendingRows += chunk.rowCount;
      while (pendingRows >= ARROW_BATCH_ROWS) await flush(ARROW_BATCH_ROWS);
    }
    if (pendingRows > 0) await flush(pendingRows);
    return written;
  } finally {
    await file.close();
  }
}
