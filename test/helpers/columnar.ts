import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, DuckDBTimestampTZValue } from '@duckdb/node-api';
import { tableFromIPC, type Table } from 'apache-arrow';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { wireColumns, type Column, type DatasetDescriptor } from '../../datasets/index.ts';
import { parseInstant } from '../../queries/instant.ts';
import { parseCsv } from './sample-data.ts';

export const PARQUET = 'application/vnd.apache.parquet';
export const ARROW = 'application/vnd.apache.arrow.stream';

/** A typed value as comparable: timestamps as epoch microseconds, 64-bit integers as bigint, NaN as null (CSV has no NaN). */
export type Cell = string | number | bigint | boolean | null;

/** A CSV field back to its contract type. */
export function csvCell(c: Column, text: string): Cell {
  if (text === '') return c.type === 'VARCHAR' ? (c.nullable ? null : '') : null;
  if (c.type === 'TIMESTAMPTZ') return parseInstant(text);
  if (c.type === 'DOUBLE' || c.type === 'INTEGER') return Number(text);
  if (c.type === 'BIGINT') return BigInt(text);
  if (c.type === 'BOOLEAN') return text === 'true';
  return text;
}

/** A value read from Parquet or Arrow, in the same comparable form. */
export function columnarCell(c: Column, v: unknown): Cell {
  if (v === null || v === undefined || (typeof v === 'number' && Number.isNaN(v))) return null;
  if (c.type === 'TIMESTAMPTZ') {
    if (v instanceof DuckDBTimestampTZValue) return v.micros;
    if (typeof v === 'bigint') return v;
    throw new Error(`timestamp read as ${typeof v}: ${String(v)}`);
  }
  if (c.type === 'BIGINT') return BigInt(v as number | bigint);
  if (c.type === 'INTEGER' || c.type === 'DOUBLE') return Number(v);
  return v as Cell;
}

/** The CSV of a response as rows of typed cells (header row checked and dropped); empty VARCHAR fields of nullable columns read as null. */
export function csvRows(d: DatasetDescriptor, text: string): Cell[][] {
  const [header, ...rows] = parseCsv(text);
  const columns = wireColumns(d);
  if (header?.join(',') !== columns.map((c) => c.name).join(',')) throw new Error(`unexpected CSV header ${header?.join(',')}`);
  return rows.map((r) => columns.map((c, i) => csvCell(c, r[i]!)));
}

const asArrayBuffer = (b: Buffer): ArrayBuffer => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

/** Parquet read by hyparquet (GeoParquet geometry decoded to GeoJSON, timestamps kept as microseconds). */
export async function hyparquetRows(bytes: Buffer): Promise<Record<string, unknown>[]> {
  return parquetReadObjects({ file: asArrayBuffer(bytes), compressors, parsers: { timestampFromMicroseconds: (us: bigint) => us } });
}

/** The rows of each row group, from the footer as hyparquet reads it. */
export function hyparquetRowGroupRows(bytes: Buffer): number[] {
  return parquetMetadata(asArrayBuffer(bytes)).row_groups.map((g) => Number(g.num_rows));
}

export function hyparquetKeyValues(bytes: Buffer): Record<string, string> {
  const meta = parquetMetadata(asArrayBuffer(bytes));
  return Object.fromEntries((meta.key_value_metadata ?? []).map((kv) => [kv.key, kv.value ?? '']));
}

/** Parquet read by DuckDB from a file: rows as objects, plus the type DuckDB gives each column. */
export async function duckdbParquet(dir: string, bytes: Buffer): Promise<{ rows: Record<string, unknown>[]; types: Record<string, string> }> {
  const file = path.join(dir, `read-${Math.random().toString(36).slice(2)}.parquet`);
  await writeFile(file, bytes);
  const c = await (await DuckDBInstance.create(':memory:')).connect();
  try {
    const described = (await c.runAndReadAll(`DESCRIBE SELECT * FROM '${file}'`)).getRowObjects();
    const types = Object.fromEntries(described.map((r) => [String(r.column_name), String(r.column_type)]));
    const geometry = 'geometry' in types ? ', ST_AsText(geometry) AS geometry_wkt' : '';
    const rows = (await c.runAndReadAll(`SELECT *${geometry} FROM '${file}'`)).getRowObjects();
    return { rows, types };
  } finally {
    c.closeSync();
  }
}

/** The stored epoch microseconds of a timestamp column (apache-arrow's row values are milliseconds as doubles). */
function arrowMicros(table: Table, name: string): (bigint | null)[] {
  const out: (bigint | null)[] = [];
  for (const data of table.getChild(name)!.data) {
    const values = data.values as BigInt64Array;
    for (let i = 0; i < data.length; i++) out.push(data.getValid(i) ? values[i]! : null);
  }
  return out;
}

/** Arrow IPC stream read by apache-arrow: rows as objects (timestamps as epoch microseconds), schema metadata. */
export function arrowTable(d: DatasetDescriptor, bytes: Buffer) {
  const table = tableFromIPC(bytes);
  const rows = table.toArray().map((r) => r.toJSON() as Record<string, unknown>);
  for (const c of wireColumns(d).filter((c) => c.type === 'TIMESTAMPTZ')) arrowMicros(table, c.name).forEach((us, i) => (rows[i]![c.name] = us));
  return { table, rows, metadata: Object.fromEntries(table.schema.metadata) };
}

/** Rows of objects as typed cells in the dataset's wire-column order. */
export function objectRows(d: DatasetDescriptor, rows: readonly Record<string, unknown>[], value: (c: Column, v: unknown) => unknown = (_c, v) => v): Cell[][] {
  const columns = wireColumns(d);
  return rows.map((r) => columns.map((c) => columnarCell(c, value(c, r[c.name]))));
}

/** GET with an Accept header; the body as bytes. */
export async function fetchBytes(get: (p: string, init?: RequestInit) => Promise<Response>, pathAndQuery: string, accept?: string) {
  const r = await get(pathAndQuery, accept ? { headers: { accept } } : {});
  return { status: r.status, headers: r.headers, bytes: Buffer.from(await r.arrayBuffer()) };
}

const cellText = (rows: readonly Cell[][]) => rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)));

/** The first row where two tables differ, as text (null when they are equal): large tables compare fast and fail readably. */
export function firstDifference(actual: readonly Cell[][], expected: readonly Cell[][]): string | null {
  const [a, e] = [cellText(actual), cellText(expected)];
  const i = a.findIndex((row, j) => row !== e[j]);
  if (i >= 0) return `row ${i}: ${a[i]} instead of ${e[i]}`;
  return a.length === e.length ? null : `${a.length} rows instead of ${e.length}`;
}
