import type { DuckDBBlobValue, DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import { Binary, Bool, Float64, Int32, Int64, makeData, RecordBatch, Struct, Timestamp, Utf8, type DataType, type Schema } from 'apache-arrow';
import type { DatasetDescriptor } from '../../../datasets/index.ts';
import { ARROW_BATCH_ROWS, arrowSchema, batchMessage } from '../../../queries/encode/arrow-ipc.ts';
import type { Compiled } from '../../../queries/sql/compile.ts';

/**
 * The Arrow batches as the server built them until they were copied from DuckDB's vectors: every
 * value read into JavaScript (getColumnValues), then written into Arrow buffers. Kept as the
 * reference the product's bytes must equal. One thing differs from the old server on purpose:
 * text is decoded keeping a leading U+FEFF, which the old server lost (a string that began with
 * it arrived without it); the vectors' copy keeps every byte.
 */

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

function referenceBatch(schema: Schema, columns: unknown[][]): RecordBatch {
  const length = columns[0]?.length ?? 0;
  const children = schema.fields.map((f, i) => columnData(f.type, columns[i]!));
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length, nullCount: 0, children }));
}


/** Text as the reference reads it: every byte DuckDB holds (the client library's decoder drops a leading U+FEFF). */
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** One group's record-batch messages, as the reference builds them from the same select. */
export async function referenceArrowBatches(c: DuckDBConnection, rows: Compiled, d: DatasetDescriptor): Promise<Buffer> {
  const schema = arrowSchema(d);
  const text = schema.fields.filter((f) => f.type instanceof Utf8).map((f) => `encode("${f.name}") AS "${f.name}"`);
  const sql = text.length ? `SELECT * REPLACE (${text.join(', ')}) FROM (${rows.sql}) AS t` : rows.sql;
  const columns: unknown[][] = schema.fields.map(() => []);
  const result = await c.stream(sql, rows.params);
  for (let chunk: DuckDBDataChunk | null; (chunk = await result.fetchChunk()) && chunk.rowCount > 0; ) {
    columns.forEach((column, i) => {
      const values = chunk!.getColumnValues(i);
      column.push(...(schema.fields[i]!.type instanceof Utf8 ? values.map((v) => v && UTF8.decode((v as DuckDBBlobValue).bytes)) : values));
    });
  }
  const messages: Uint8Array[] = [];
  const total = columns[0]!.length;
  for (let at = 0; at < total; at += ARROW_BATCH_ROWS) {
    messages.push(batchMessage(referenceBatch(schema, columns.map((column) => column.slice(at, at + ARROW_BATCH_ROWS)))));
  }
  return Buffer.concat(messages);
}
