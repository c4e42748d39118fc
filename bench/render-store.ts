import { createHash } from 'node:crypto';
import { open, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import duckdb from '@duckdb/node-bindings';
import type { DuckDBConnection, DuckDBMaterializedResult } from '@duckdb/node-api';
import { Utf8 } from 'apache-arrow';
import { copyInto } from '../queries/encode/copy-stream.ts';
import { sinkFor } from '../queries/encode/arrow-columns.ts';
import { fileIdentity, type DataFile } from '../queries/files/data-file.ts';
import { compileRows, csvRows, featureRows, type QuerySpec, type RowSelect } from '../queries/sql/compile.ts';
import { compileCopy, CSV_COPY, FEATURE_COPY, type TextCopy } from '../queries/sql/compile-copy.ts';
import { ident } from '../queries/sql/sql.ts';
import { lowerBound } from '../queries/renderings/render-file.ts';

/**
 * One data file rendered once: per row in order-key order, the time key (epoch µs), the Feature as
 * FEATURE_COPY writes it (`,{...}\n`) and the CSV line as CSV_COPY writes it (`...\n`), each format
 * one buffer with the rows' offsets. A window of the file is then one contiguous byte range.
 */
export interface Rendered {
  keys: BigInt64Array;
  features: Buffer;
  featureOffsets: Float64Array;
  csv: Buffer;
  csvOffsets: Float64Array;
}

/** The file's whole rows written by DuckDB's own CSV writer (the bytes today's windows are made of), read back. */
async function copyWhole(c: DuckDBConnection, spec: QuerySpec, file: string, select: RowSelect, copy: TextCopy, tempDir: string): Promise<Buffer> {
  const target = path.join(tempDir, `render-${process.pid}-${Math.random().toString(36).slice(2)}.txt`);
  const rows = compileRows({ spec, files: [file], select, from: null, to: null, order: 'sort' });
  try {
    await copyInto(c, compileCopy(rows, copy, target, tempDir));
    return await readFile(target);
  } finally {
    await rm(target, { force: true });
  }
}

/**
 * Where each row ends: at a newline outside quotes. With QUOTE and ESCAPE both `"` an escaped quote
 * is two quotes, so the quote state flips on every `"`. Feature text never holds a raw newline nor,
 * outside JSON strings, a quote: the same scan serves both.
 */
export function rowOffsets(bytes: Buffer, quoted: boolean): Float64Array {
  const ends: number[] = [0];
  let inside = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (quoted && b === 0x22) inside = !inside;
    else if (b === 0x0a && !inside) ends.push(i + 1);
  }
  return Float64Array.from(ends);
}

/** The file rendered: the order key, then the two formats' whole-file copies cut into rows. */
export async function renderFile(c: DuckDBConnection, spec: QuerySpec, file: string, tempDir: string): Promise<Rendered> {
  const time = spec.descriptor.time!.column;
  const keySelect: RowSelect = () => ({ fields: `epoch_us(t.${ident(time)}) AS k`, join: '' });
  const keyRows = (await c.runAndReadAll(compileRows({ spec, files: [file], select: keySelect, from: null, to: null, order: 'sort' }).sql)).getRows();
  const keys = BigInt64Array.from(keyRows.map((r) => r[0] as bigint));
  const features = await copyWhole(c, spec, file, featureRows, FEATURE_COPY, tempDir);
  const csv = await copyWhole(c, spec, file, csvRows, CSV_COPY, tempDir);
  const featureOffsets = rowOffsets(features, false);
  const csvOffsets = rowOffsets(csv, true);
  if (featureOffsets.length !== keys.length + 1 || csvOffsets.length !== keys.length + 1) throw new Error('rendered rows do not match the keys');
  return { keys, features, featureOffsets, csv, csvOffsets };
}

/** The byte range of rows [from, to) of a format; GeoJSON's first Feature has no separating comma. */
export function windowRange(r: Rendered, format: 'geojson' | 'csv', from: bigint, to: bigint): [number, number] {
  const i = lowerBound(r.keys, from);
  const j = lowerBound(r.keys, to);
  if (i >= j) return [0, 0];
  const offsets = format === 'geojson' ? r.featureOffsets : r.csvOffsets;
  return [offsets[i]! + (format === 'geojson' ? 1 : 0), offsets[j]!];
}

/** Variant D: the window sliced from the rendering held in memory (no copy). */
export function fromMemory(r: Rendered, format: 'geojson' | 'csv', from: bigint, to: bigint): Buffer {
  const [start, end] = windowRange(r, format, from, to);
  return (format === 'geojson' ? r.features : r.csv).subarray(start, end);
}

/** The sidecar's base name: the file's identity, so a replaced file can never find an old rendering. */
export const sidecarName = (f: DataFile): string => createHash('sha256').update(fileIdentity(f)).digest('hex').slice(0, 32);

/** Variant C's sidecar: the two buffers as flat files; the keys and offsets stay in memory. */
export async function writeFlatSidecar(r: Rendered, base: string): Promise<void> {
  await writeFile(`${base}.features`, r.features);
  await writeFile(`${base}.csv`, r.csv);
}

/** Variant C: the window's byte range read from the flat sidecar (opened, read, closed per request). */
export async function fromFlatSidecar(r: Rendered, base: string, format: 'geojson' | 'csv', from: bigint, to: bigint): Promise<Buffer> {
  const [start, end] = windowRange(r, format, from, to);
  if (end <= start) return Buffer.alloc(0);
  const handle = await open(`${base}.${format === 'geojson' ? 'features' : 'csv'}`, 'r');
  try {
    const out = Buffer.allocUnsafe(end - start);
    const { bytesRead } = await handle.read(out, 0, out.length, start);
    if (bytesRead !== out.length) throw new Error('short read of a sidecar');
    return out;
  } finally {
    await handle.close();
  }
}

/** Variant B's sidecar: Parquet of (k, feature, csv) in order, 2,048-row groups, written by DuckDB from the rendering. */
export async function writeParquetSidecar(c: DuckDBConnection, r: Rendered, target: string): Promise<void> {
  const table = `render_side_${process.pid}`;
  await c.run(`CREATE OR REPLACE TABLE ${table} (k BIGINT, feature VARCHAR, csv VARCHAR)`);
  const appender = await c.createAppender(table);
  for (let i = 0; i < r.keys.length; i++) {
    appender.appendBigInt(r.keys[i]!);
    appender.appendVarchar(r.features.toString('utf8', r.featureOffsets[i]!, r.featureOffsets[i + 1]!));
    appender.appendVarchar(r.csv.toString('utf8', r.csvOffsets[i]!, r.csvOffsets[i + 1]!));
    appender.endRow();
  }
  appender.closeSync();
  await c.run(`COPY ${table} TO '${target.replaceAll("'", "''")}' (FORMAT parquet, ROW_GROUP_SIZE 2048)`);
  await c.run(`DROP TABLE ${table}`);
}

/** One VARCHAR column's values concatenated as bytes, read from DuckDB's vectors (as featureBytes does). */
export function textColumnBytes(result: DuckDBMaterializedResult): Buffer {
  const parts: Uint8Array[] = [];
  for (let i = 0; i < result.chunkCount; i++) {
    const chunk = result.getChunk(i);
    const sink = sinkFor(new Utf8(), chunk.rowCount);
    sink.put(duckdb.data_chunk_get_vector(chunk.chunk, 0), chunk.rowCount, 0, chunk.rowCount, 0);
    const data = sink.take(chunk.rowCount);
    parts.push((data.values as Uint8Array).subarray(0, data.valueOffsets[chunk.rowCount]!));
  }
  return Buffer.concat(parts);
}

/** Variant B: the window's text column read from the Parquet sidecar by DuckDB (row groups pruned on k). */
export async function fromParquetSidecar(c: DuckDBConnection, target: string, format: 'geojson' | 'csv', from: bigint, to: bigint): Promise<Buffer> {
  const column = format === 'geojson' ? 'feature' : 'csv';
  const sql = `SELECT ${column} FROM read_parquet('${target.replaceAll("'", "''")}') WHERE k >= $1 AND k < $2`;
  const bytes = textColumnBytes(await c.run(sql, [from, to]));
  return format === 'geojson' && bytes.length > 0 ? bytes.subarray(1) : bytes;
}
