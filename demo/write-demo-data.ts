// Writes the demo datasets as Hive-partitioned Parquet in the contract's layout. The plans
// (demo/) say what to write; this file only moves rows through DuckDB: a staging
// table per partition, one ordered COPY per file, and the _chain.json per dataset.

import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBTimestampTZValue, type DuckDBAppender, type DuckDBConnection } from '@duckdb/node-api';
import { buildDemoPlans, chainFile, type DemoOptions } from './plans/demo-plans.ts';
import {
  DEMO_FILE_NAME,
  DEMO_SQL_MACROS,
  stageTableSql,
  type DemoDatasetPlan,
  type StageColumn,
  type StageValue,
} from './plans/plan.ts';
import { writeFileAtomic } from '../shared/atomic-file.ts';
import { sqlString } from '../queries/sql/sql.ts';
import { withWriterDb } from './writer-db.ts';

export interface WriteDemoDataOptions extends DemoOptions {
  outDir: string;
}

export interface DemoDatasetSummary {
  dataset: string;
  rows: number;
  files: number;
}

export async function writeDemoData(
  opts: WriteDemoDataOptions,
  onProgress?: (message: string) => void,
): Promise<DemoDatasetSummary[]> {
  if (opts.outDir.trim() === '') throw new Error('writeDemoData: outDir is required');
  const plans = buildDemoPlans(opts);
  // One thread: row groups and file bytes then depend only on the data, never on scheduling.
  return withWriterDb(1, async ({ connection }) => {
    for (const macro of DEMO_SQL_MACROS) await connection.run(macro);
    const summaries: DemoDatasetSummary[] = [];
    for (const plan of plans) summaries.push(await writeDataset(connection, plan, opts, onProgress));
    return summaries;
  });
}

async function writeDataset(
  connection: DuckDBConnection,
  plan: DemoDatasetPlan,
  opts: WriteDemoDataOptions,
  onProgress?: (message: string) => void,
): Promise<DemoDatasetSummary> {
  const startedMs = performance.now();
  const datasetDir = path.join(opts.outDir, plan.dataset);
  await removeDemoFiles(datasetDir);
  let rows = 0;
  let files = 0;
  const partitions = plan.partitions()[Symbol.iterator]();
  for (let next = partitions.next(); !next.done; ) {
    const dir = path.join(datasetDir, ...next.value.dirs);
    const { written } = await stagePartition(connection, plan, dir, next.value.rows);
    try {
      // DuckDB copies on its own thread: make the next partition's stage rows meanwhile.
      next = partitions.next();
    } finally {
      rows += await written;
    }
    files += 1;
  }
  await writeFileAtomic(path.join(datasetDir, '_chain.json'), `${JSON.stringify(chainFile(opts.end, opts.seed, rows, files), null, 2)}\n`);
  const seconds = ((performance.now() - startedMs) / 1000).toFixed(1);
  onProgress?.(`${plan.dataset}: ${rows.toLocaleString('en')} rows in ${files} files, ${seconds} s`);
  return { dataset: plan.dataset, rows, files };
}

/** Stages one partition and starts its COPY; `written` settles once the file is renamed into place. */
async function stagePartition(
  connection: DuckDBConnection,
  plan: DemoDatasetPlan,
  dir: string,
  rows: readonly StageValue[][],
): Promise<{ written: Promise<number> }> {
  await mkdir(dir, { recursive: true });
  // A fresh table each time: DELETE would leave tombstones that every later scan pays for.
  await connection.run(stageTableSql(plan.stage));
  await appendRows(connection, plan.stage, rows);
  // Contract: a file appears atomically, so write under a name readers skip, then rename.
  const hidden = path.join(dir, `_${DEMO_FILE_NAME}`);
  const written = connection
    .runAndReadAll(`COPY (${plan.selectSql}) TO ${sqlString(hidden)} (FORMAT parquet)`)
    .then(async (copied) => {
      await rename(hidden, path.join(dir, DEMO_FILE_NAME));
      return Number(copied.getRows()[0]?.[0] ?? 0);
    });
  return { written };
}

async function appendRows(connection: DuckDBConnection, stage: readonly StageColumn[], rows: readonly StageValue[][]): Promise<void> {
  const appender = await connection.createAppender('demo_stage');
  try {
    for (const row of rows) {
      stage.forEach((column, index) => appendValue(appender, column, row[index] ?? null));
      appender.endRow();
    }
  } finally {
    appender.closeSync();
  }
}

function appendValue(appender: DuckDBAppender, column: StageColumn, value: StageValue): void {
  if (value === null) return appender.appendNull();
  const expected = column.type === 'VARCHAR' ? 'string' : column.type === 'BOOLEAN' ? 'boolean' : 'number';
  if (typeof value !== expected) throw new Error(`demo stage column ${column.name} expects ${expected}, got ${typeof value}`);
  switch (column.type) {
    case 'VARCHAR': return appender.appendVarchar(value as string);
    case 'BOOLEAN': return appender.appendBoolean(value as boolean);
    case 'DOUBLE': return appender.appendDouble(value as number);
    case 'INTEGER': return appender.appendInteger(value as number);
    case 'BIGINT': return appender.appendBigInt(BigInt(value as number));
    case 'TIMESTAMPTZ': return appender.appendTimestampTZ(new DuckDBTimestampTZValue(BigInt(value as number) * 1000n));
  }
}

/** Deletes what an earlier demo run wrote (and folders left empty), nothing else. */
async function removeDemoFiles(datasetDir: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(datasetDir, { recursive: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const ours = entries.filter((entry) => [DEMO_FILE_NAME, `_${DEMO_FILE_NAME}`].includes(path.basename(entry)));
  for (const entry of ours) await rm(path.join(datasetDir, entry), { force: true });
  const dirs = [...new Set(ours.map((entry) => path.dirname(entry)))].filter((dir) => dir !== '.');
  // Deepest first, so model=x/ goes once its month=... folders are gone.
  for (const dir of dirs.sort((a, b) => b.length - a.length)) {
    for (let current = dir; current !== '.'; current = path.dirname(current)) {
      if (!(await removeIfEmpty(path.join(datasetDir, current)))) break;
    }
  }
}

async function removeIfEmpty(dir: string): Promise<boolean> {
  try {
    await rmdir(dir);
    return true;
  } catch {
    return false;
  }
}
