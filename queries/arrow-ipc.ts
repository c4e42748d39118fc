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
  vectorFromArray,
  type DataType,
} from 'apache-arrow';
import { wireColumns, type Column, type DatasetDescriptor } from '../datasets/index.ts';
import { GEOMETRY_COLUMN, hasColumnarGeometry } from './compile-columnar.ts';
import type { Compiled } from './compile.ts';

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

/** A timestamp column from epoch microseconds (bigint or null). */
function timestampData(values: readonly (bigint | null)[]) {
  const data = new BigInt64Array(values.length);
  const validity = new Uint8Array((values.length + 7) >> 3);
  let nulls = 0;
  values.forEach((v, i) => {
    if (v === null) nulls++;
    else {
      data[i] = v;
      validity[i >> 3]! |= 1 << (i & 7);
    }
  });
  return makeData({ type: TIMESTAMP, length: values.length, nullCount: nulls, nullBitmap: nulls ? validity : null, data });
}

function batchOf(schema: Schema, columns: unknown[][], length: number): RecordBatch {
  const children = schema.fields.map((f, i) => {
    const values = columns[i]!.slice(0, length);
    if (f.type instanceof Timestamp) return timestampData(values as (bigint | null)[]);
    if (f.type instanceof Binary) return vectorFromArray((values as (DuckDBBlobValue | null)[]).map((v) => v?.bytes ?? null), f.type).data[0]!;
    return vectorFromArray(values, f.type).data[0]!;
  });
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
  const pending: unknown[][] = schema.fields.map(() => []);
  let written = 0;
  const flush = async (length: number) => {
    await file.write(batchMessage(batchOf(schema, pending, length)));
    for (const p of pending) p.splice(0, length);
    written += length;
  };
  try {
    const result = await c.stream(rows.sql, rows.params);
    for (let chunk: DuckDBDataChunk | null; (chunk = await result.fetchChunk()) && chunk.rowCount > 0; ) {
      signal?.throwIfAborted();
      pending.forEach((p, i) => p.push(...chunk!.getColumnValues(i)));
      while (pending[0]!.length >= ARROW_BATCH_ROWS) await flush(ARROW_BATCH_ROWS);
    }
    if (pending[0]!.length > 0) await flush(pending[0]!.length);
    return written;
  } finally {
    await file.close();
  }
}
