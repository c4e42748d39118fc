import { open, readFile, rm } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { TempBudget } from '../../engine/temp-budget.ts';
import { ident, quoteFilePath, sqlString } from '../../sql/sql.ts';
import type { Groups } from '../aggregate-groups.ts';
import type { AggregateColumn, AggregateColumnType } from '../aggregate-rows.ts';
import { aggregateCsv } from './aggregate-text.ts';
import { tempFileBase } from '../../encode/copy-stream.ts';
import { combineFooters, readGroupFooter } from '../../../shared/parquet/combine-footers.ts';
import { geoMetadata } from '../../../shared/parquet/geo-metadata.ts';
import { GEOMETRY_COLUMN } from '../../sql/compile-columnar.ts';
import { withWkbHex, WKB_HEX_COLUMN } from './aggregate-geometry.ts';

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

/** DuckDB's COPY of the groups' CSV into `parquet`: the columns typed, geometry (WKB as hex) as GEOMETRY, `metadata` as key-value metadata. */
function copySql(files: { csv: string; parquet: string; dir: string }, columns: readonly AggregateColumn[], geometry: boolean, metadata: Readonly<Record<string, string>>): string {
  const typed = geometry ? [...columns, WKB_HEX_COLUMN] : columns;
  const types = typed.map((col) => `${sqlString(col.name)}: '${SQL_TYPES[col.type]}'`).join(', ');
  const source = `read_csv(${quoteFilePath(files.csv, files.dir, 'TEMP_DIR')}, header = true, delim = ',', quote = '"', escape = '"', allow_quoted_nulls = false, columns = {${types}})`;
  const g = ident(GEOMETRY_COLUMN);
  const select = geometry ? `SELECT * EXCLUDE (${g}), ST_GeomFromWKB(from_hex(${g})) AS ${g}` : 'SELECT *';
  const kv = Object.entries(metadata).map(([k, v]) => `${sqlString(k)}: ${sqlString(v)}`);
  // GeoParquet 1.x as the data endpoints write it; DuckDB's own `geo` block is then replaced by theirs.
  const options = ['FORMAT parquet', 'COMPRESSION zstd', ...(geometry ? ["GEOPARQUET_VERSION 'V1'"] : []), ...(kv.length ? [`KV_METADATA {${kv.join(', ')}}`] : [])].join(', ');
  return `COPY (${select} FROM ${source}) TO ${quoteFilePath(files.parquet, files.dir, 'TEMP_DIR')} (${options})`;
}

/**
 * The file DuckDB wrote with the data endpoints' footer: `metadata` and their GeoParquet 1.1 `geo`
 * block (WKB, CRS84, the geometry types and bbox of the groups), the writer string fixed.
 */
async function withGeoFooter(parquet: string, metadata: Readonly<Record<string, string>>): Promise<Buffer> {
  const footer = await readGroupFooter(parquet);
  const bytes = await readFile(parquet);
  return Buffer.concat([bytes.subarray(0, footer.bodyEnd), combineFooters([footer], { ...metadata, geo: geoMetadata([footer], GEOMETRY_COLUMN) })]);
}

/**
 * One Parquet file of the groups with the columns' types and `metadata` as key-value metadata:
 * DuckDB's own writer reads back the groups' CSV (shortest round-trip numbers and UTC instants
 * parse to the very values; a quoted empty text stays text). Groups with geometry (`geometry`)
 * add a last `geometry` column, GeoParquet as the data endpoints'. Both temp files are removed.
 */
export async function aggregateParquet(c: DuckDBConnection, temp: { dir: string; budget: TempBudget }, metadata: Readonly<Record<string, string>>, columns: readonly AggregateColumn[], groups: Groups, geometry: boolean): Promise<Buffer> {
  const tempDir = temp.dir;
  const base = tempFileBase(tempDir);
  const [csv, parquet] = [`${base}.csv`, `${base}.parquet`];
  // The CSV and a Parquet file no larger than it, in TEMP_DIR_MAX_MB like every response's temp files (a full budget: 503).
  const reservation = temp.budget.reserve(0);
  try {
    const texts = geometry ? aggregateCsv([...columns, WKB_HEX_COLUMN], withWkbHex(groups)) : aggregateCsv(columns, groups);
    await writeCsv(csv, texts, (bytes) => reservation.growTo(2 * bytes));
    await c.run(copySql({ csv, parquet, dir: tempDir }, columns, geometry, geometry ? {} : metadata));
    return geometry ? await withGeoFooter(parquet, metadata) : await readFile(parquet);
  } finally {
    await Promise.all([rm(csv, { force: true }), rm(parquet, { force: true })]);
    reservation.release();
  }
}
