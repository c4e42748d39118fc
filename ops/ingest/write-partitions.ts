// Staged rows to partition files: drop rows repeated in the input or already in the partition,
// then one sorted file per partition touched, written under a hidden name and renamed into place.

import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { fileColumns, type Column, type DatasetDescriptor } from '../../datasets/index.ts';
import { listFiles } from '../../queries/files/partitions.ts';
import { ident, sqlString } from '../../queries/sql/sql.ts';
import { STAGE_NULL } from './stage-file.ts';

/** What makes a row "already present": the record id where there is one, else the order key (with the level for fire danger). */
export const INGEST_KEY: Record<string, readonly string[]> = {
  hotspots: ['id'],
  'burnt-areas': ['id'],
  'fire-danger': ['date', 'level', 'areaCode'],
  'sensor-readings': ['measuredAtUtc', 'stationId'],
  'sensor-stations': ['stationId'],
};

const stageType = (c: Column): string => (c.type === 'TIMESTAMPTZ' ? 'BIGINT' : c.type === 'GEOMETRY' ? 'VARCHAR' : c.type);

function typedColumn(c: Column): string {
  if (c.type === 'TIMESTAMPTZ') return `make_timestamp(${ident(c.name)})::TIMESTAMPTZ AS ${ident(c.name)}`;
  // As the demo writer stores perimeters: GeoParquet WKB, CRS84.
  if (c.type === 'GEOMETRY') return `${ident(c.name)}::GEOMETRY('OGC:CRS84') AS ${ident(c.name)}`;
  return ident(c.name);
}

/** Loads the stage file; rows whose geometry DuckDB cannot read come back as problems. */
export async function loadStage(c: DuckDBConnection, d: DatasetDescriptor, stageFile: string): Promise<{ file: number; line: number; problem: string }[]> {
  const columns = [['_file', 'INTEGER'], ['_line', 'BIGINT'], ['_dir', 'VARCHAR'], ...fileColumns(d).map((col) => [col.name, stageType(col)])];
  const spec = columns.map(([name, type]) => `${sqlString(name!)}: ${sqlString(type!)}`).join(', ');
  await c.run(`CREATE TABLE stage AS SELECT * FROM read_csv(${sqlString(stageFile)}, header = false, auto_detect = false, delim = ',', quote = '"', escape = '"', nullstr = ${sqlString(STAGE_NULL)}, columns = {${spec}})`);
  const geometry = fileColumns(d).find((col) => col.type === 'GEOMETRY');
  if (!geometry) return [];
  const bad = await c.runAndReadAll(`SELECT _file, _line FROM stage WHERE TRY_CAST(${ident(geometry.name)} AS GEOMETRY) IS NULL ORDER BY _file, _line`);
  await c.run(`DELETE FROM stage WHERE TRY_CAST(${ident(geometry.name)} AS GEOMETRY) IS NULL`);
  return bad.getRows().map(([file, line]) => ({ file: Number(file), line: Number(line), problem: `${geometry.name}: not a valid polygon` }));
}

/** Rows in the contract's types, each key once (its first occurrence in the input), grouped by partition. */
export async function dedupeStage(c: DuckDBConnection, d: DatasetDescriptor): Promise<number> {
  const key = INGEST_KEY[d.name]!.map(ident).join(', ');
  const typed = fileColumns(d).map(typedColumn).join(', ');
  await c.run(`CREATE TABLE fresh AS SELECT _file, _line, _dir, ${typed} FROM stage QUALIFY row_number() OVER (PARTITION BY ${key} ORDER BY _file, _line) = 1 ORDER BY _dir, ${d.orderBy.map(ident).join(', ')}`);
  await c.run('DROP TABLE stage');
  return Number((await c.runAndReadAll('SELECT count(*) FROM fresh')).getRows()[0]![0]);
}

async function existingFiles(dir: string, dataset: string): Promise<string[]> {
  const folder = await stat(dir).catch(() => null);
  return folder?.isDirectory() ? (await listFiles(dir, dataset)).map((f) => f.path) : [];
}

export interface PartitionResult {
  dir: string;
  /** Rows of this partition in the input, after repeats within the input are dropped. */
  rows: number;
  /** Of those, already in the partition's files. */
  present: number;
  /** The file written (relative to the dataset folder), or null for none (nothing new, or a dry run). */
  file: string | null;
}

/** Partitions the input touches, with their row counts, in folder order. */
export async function stagedPartitions(c: DuckDBConnection): Promise<{ dir: string; rows: number }[]> {
  const rows = (await c.runAndReadAll('SELECT _dir, count(*) FROM fresh GROUP BY _dir ORDER BY _dir')).getRows();
  return rows.map(([dir, count]) => ({ dir: String(dir), rows: Number(count) }));
}

/** The partition's rows not yet in its files: a table of them when some files exist, else a filter of the input. */
async function newRows(c: DuckDBConnection, d: DatasetDescriptor, dir: string, part: { dir: string; rows: number }): Promise<{ source: string; rows: number }> {
  const existing = await existingFiles(dir, d.name);
  const inPartition = `(SELECT * FROM fresh WHERE _dir = ${sqlString(part.dir)})`;
  if (existing.length === 0) return { source: inPartition, rows: part.rows };
  const key = INGEST_KEY[d.name]!.map(ident).join(', ');
  await c.run(`CREATE OR REPLACE TEMP TABLE part AS SELECT * FROM ${inPartition} ANTI JOIN (SELECT DISTINCT ${key} FROM read_parquet([${existing.map(sqlString).join(', ')}])) USING (${key})`);
  return { source: 'part', rows: Number((await c.runAndReadAll('SELECT count(*) FROM part')).getRows()[0]![0]) };
}

/** The rows of one partition not yet in its files, written as one file sorted by the order key (unless `dryRun`). */
export async function writePartition(c: DuckDBConnection, d: DatasetDescriptor, datasetDir: string, part: { dir: string; rows: number }, dryRun: boolean): Promise<PartitionResult> {
  const dir = path.join(datasetDir, part.dir);
  const fresh = await newRows(c, d, dir, part);
  const result = { dir: part.dir, rows: part.rows, present: part.rows - fresh.rows, file: null };
  if (fresh.rows === 0 || dryRun) return result;
  const name = `ingest-${new Date().toISOString().replace(/[-:]|\.\d+/g, '')}-${randomBytes(4).toString('hex')}.parquet`;
  await mkdir(dir, { recursive: true });
  const hidden = path.join(dir, `_${name}`);
  const columns = fileColumns(d).map((col) => ident(col.name)).join(', ');
  try {
    await c.run(`COPY (SELECT ${columns} FROM ${fresh.source} ORDER BY ${d.orderBy.map(ident).join(', ')}) TO ${sqlString(hidden)} (FORMAT parquet)`);
    await rename(hidden, path.join(dir, name));
  } catch (e) {
    await rm(hidden, { force: true });
    throw e;
  }
  return { ...result, file: path.join(part.dir, name) };
}
