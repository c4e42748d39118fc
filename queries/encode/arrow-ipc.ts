import { open } from 'node:fs/promises';
import duckdb from '@duckdb/node-bindings';
import type { DuckDBConnection, DuckDBDataChunk, DuckDBTypeId } from '@duckdb/node-api';
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
import { sinkFor, type ColumnSink } from './arrow-columns.ts';

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
export const GEOARROW = new Map([
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
export function batchMessage(batch: RecordBatch): Uint8Array {
  const stream = RecordBatchStreamWriter.writeAll([batch]).toUint8Array(true);
  return stream.subarray(schemaMessageLength(stream), stream.length - ARROW_END_OF_STREAM.length);
}

/** The batch's columns as one record batch of `length` rows. */
function batchOf(schema: Schema, sinks: readonly ColumnSink[], length: number): RecordBatch {
  const children = sinks.map((s) => s.take(length));
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length, nullCount: 0, children }));
}

/** Refuses a select whose column types are not the ones the sinks copy (a bug, never a client's doing). */
function checkTypes(types: readonly DuckDBTypeId[], sinks: readonly ColumnSink[]): void {
  const wrong = sinks.findIndex((s, i) => types[i] !== s.duckdbType);
  if (types.length !== sinks.length || wrong >= 0) throw new Error(`the Arrow select gives column ${wrong} as DuckDB type ${types[wrong]}, not ${sinks[wrong]?.duckdbType}`);
}

/**
 * One group's rows as Arrow record batches in `target`, read from DuckDB's stream(). The client
 * library ends a failed stream as if it had finished, so the count returned is what was really
 * written: the caller compares the sum with the promised count and cuts the response when short.
 */
export async function writeArrowRows(c: DuckDBConnection, rows: Compiled, target: string, d: DatasetDescriptor, signal?: AbortSignal): Promise<number> {
  const schema = arrowSchema(d);
  const sinks = schema.fields.map((f) => sinkFor(f.type, ARROW_BATCH_ROWS));
  const file = await open(target, 'w');
  let filled = 0;
  let written = 0;
  const flush = async () => {
    await file.write(batchMessage(batchOf(schema, sinks, filled)));
    written += filled;
    filled = 0;
  };
  try {
    const result = await c.stream(rows.sql, rows.params);
    checkTypes(result.columnTypes().map((t) => t.typeId), sinks);
    for (let chunk: DuckDBDataChunk | null; (chunk = await result.fetchChunk()) && chunk.rowCount > 0; ) {
      signal?.throwIfAborted();
      const count = chunk.rowCount;
      const vectors = sinks.map((_, i) => duckdb.data_chunk_get_vector(chunk!.chunk, i));
      for (let from = 0; from < count; ) {
        const n = Math.min(count - from, ARROW_BATCH_ROWS - filled);
        sinks.forEach((s, i) => s.put(vectors[i]!, count, from, n, filled));
        [from, filled] = [from + n, filled + n];
        if (filled === ARROW_BATCH_ROWS) await flush();
      }
    }
    if (filled > 0) await flush();
    return written;
  } finally {
    await file.close();
  }
}
