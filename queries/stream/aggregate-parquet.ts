import { open, readFile, rm } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { TempBudget } from '../engine/temp-budget.ts';
import { quoteFilePath, sqlString } from '../sql/sql.ts';
import type { Groups } from './aggregate-groups.ts';
import type { AggregateColumn, AggregateColumnType } from './aggregate-rows.ts';
import { aggregateCsv } from './aggregate-text.ts';
import { tempFileBase } from './copy-stream.ts';

/** Aggregates in Parquet are written by DuckDB, on the request's connection, from the groups' CSV. */
export interface AggregateParquet {
  kind: 'parquet';
}

export const AGGREGATE_PARQUET: AggregateParquet = { kind: 'parquet' };

const SQL_TYPES: Record<AggregateColumnType, string> = { time: 'TIMESTAMPTZ', text: 'VARCHAR', integer: 'BIGINT', double: 'DOUBLE' };

/** Writes `texts` to `file` a batch at a time, telling `grown` the bytes written so far before each write. */
async function writeCsv(file: string, texts: Iterable<string>, grown: (bytes: number) => void): Promise<void> {
  const handle = await open(file, 'w');
  let bytes = 0;
  try {
    for (const text of texts) {
      const chunk = Buffer.from(text);
      grown((bytes += chunk.length));
      await handle.write(chunk);
    }
  } finally {
    await handle.close();
  }
}

/**
 * One Parquet file of the groups with the columns' types and `metadata` as key-value metadata:
 * DuckDB's own writer reads back the groups' CSV (shortest round-trip numbers and UTC instants
 * parse to the very values; a quoted empty text stays text). Both temp files are removed.
 */
export async function aggregateParquet(c: DuckDBConnection, temp: { dir: string; budget: TempBudget }, metadata: Readonly<Record<string, string>>, columns: readonly AggregateColumn[], groups: Groups): Promise<Buffer> {
  const tempDir = temp.dir;
  const base = tempFileBase(tempDir);
  const [csv, parquet] = [`${base}.csv`, `${base}.parquet`];
  // The CSV and a Parquet file no larger than it, in TEMP_DIR_MAX_MB like every response's temp files (a full budget: 503).
  const reservation = temp.budget.reserve(0);
  try {
    await writeCsv(csv, aggregateCsv(columns, groups), (bytes) => reservation.growTo(2 * bytes));
    const types = columns.map((col) => `${sqlString(col.name)}: '${SQL_TYPES[col.type]}'`).join(', ');
    const source = `read_csv(${quoteFilePath(csv, tempDir, 'TEMP_DIR')}, header = true, delim = ',', quote = '"', escape = '"', allow_quoted_nulls = false, columns = {${types}})`;
    const kv = Object.entries(metadata).map(([k, v]) => `${sqlString(k)}: ${sqlString(v)}`);
    const options = ['FORMAT parquet', 'COMPRESSION zstd', ...(kv.length ? [`KV_METADATA {${kv.join(', ')}}`] : [])].join(', ');
    await c.run(`COPY (SELECT * FROM ${source}) TO ${quoteFilePath(parquet, tempDir, 'TEMP_DIR')} (${options})`);
    return await readFile(parquet);
  } finally {
    await Promise.all([rm(csv, { force: true }), rm(parquet, { force: true })]);
    reservation.release();
  }
}
