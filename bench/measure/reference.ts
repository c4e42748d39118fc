import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { DATASETS, wireColumns } from '../../datasets/index.ts';
import { listParquet, quoteSql, readParquetSql, windowWhere } from '../server/data.ts';
import type { DayWindow } from '../lib/options.ts';

/** Threads of the reference COPY: every core, as DuckDB uses by default. */
export const REFERENCE_THREADS = os.availableParallelism();

export interface ReferenceAsk {
  dataDir: string;
  dataset: string;
  timeColumn: string;
  orderBy: readonly string[];
  window: DayWindow;
  format: 'csv' | 'json' | 'parquet';
  /** With `json`: the rows as GeoJSON Feature objects (featureList) instead of flat objects. */
  features?: boolean;
  /** REFERENCE_THREADS in the bench; the server's memory limit. */
  threads: number;
  memoryLimit: string;
}

export interface ReferenceRun {
  wallMs: number;
  rows: number;
  bytes: number;
  sql: string;
}

/**
 * A point dataset's rows as GeoJSON Feature objects for DuckDB's JSON writer: `type`, the id, a
 * Point geometry and every wire column in `properties`, in the server's member order, each value
 * in DuckDB's own JSON form (timestamps as DuckDB text, integral doubles as `1.0`, NaN as `NaN`):
 * what DuckDB's writer costs for the Features themselves.
 */
export function featureList(dataset: string): string {
  const d = DATASETS.find((x) => x.name === dataset);
  const g = d?.geometry;
  if (!d || g?.kind !== 'point') throw new Error(`${dataset}: the Feature reference needs a dataset with point geometry`);
  const properties = wireColumns(d).map((c) => `'${c.name}': "${c.name}"`).join(', ');
  const id = d.featureId ? `"${d.featureId}" AS id, ` : '';
  return `'Feature' AS type, ${id}{'type': 'Point', 'coordinates': ["${g.longitude}", "${g.latitude}"]} AS geometry, {${properties}} AS properties`;
}

/** The ordered SELECT the server's extract is compared with: every column (or the Features), the same window, the same order. */
export async function referenceSelect(a: ReferenceAsk): Promise<string> {
  const files = await listParquet(a.dataDir, a.dataset);
  const order = a.orderBy.map((c) => `"${c}"`).join(', ');
  return `SELECT ${a.features ? featureList(a.dataset) : '*'} FROM ${readParquetSql(files)} WHERE ${windowWhere(a.timeColumn, a.window)} ORDER BY ${order}`;
}

/**
 * DuckDB's own `COPY (...) TO file`, timed around the statement alone, in a fresh instance
 * (no caches shared with the counting instance) with the server's thread count and memory limit.
 * The file is deleted afterwards; only its size is kept.
 */
export async function runReference(a: ReferenceAsk): Promise<ReferenceRun> {
  const select = await referenceSelect(a);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-ref-'));
  const out = path.join(dir, `out.${a.format}`);
  const instance = await DuckDBInstance.create(':memory:', {
    threads: String(a.threads),
    memory_limit: a.memoryLimit,
    temp_directory: path.join(dir, 'spill'),
  });
  const connection = await instance.connect();
  try {
    const sql = `COPY (${select}) TO ${quoteSql(out)} (FORMAT ${a.format})`;
    const started = performance.now();
    const result = await connection.runAndReadAll(sql);
    const wallMs = performance.now() - started;
    // COPY answers with the number of rows it wrote.
    const rows = Number(result.getRows()[0]?.[0] ?? Number.NaN);
    const list = a.features ? "'Feature' AS type, id, {'type': 'Point', ...} AS geometry, {...} AS properties" : '*';
    return { wallMs, rows, bytes: (await stat(out)).size, sql: `COPY (SELECT ${list} ... ORDER BY ${a.orderBy.join(', ')}) TO file (FORMAT ${a.format})` };
  } finally {
    connection.closeSync();
    instance.closeSync();
    await rm(dir, { recursive: true, force: true });
  }
}
