import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open, readdir, readFile, rm, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { REPO_ROOT, type BenchOptions, type DayWindow } from '../lib/options.ts';
import { ownChild } from './children.ts';
import { sqlString } from '../../queries/sql/sql.ts';

/** Written when generation starts (complete: false) and again when it ends (complete: true). */
const MARKER = '_bench-data.json';

interface Marker {
  end: string;
  days: number;
  scale: number;
  seed: number;
  complete: boolean;
}

export interface DataSet {
  dir: string;
  /** Seconds the demo-data command took, or null when an existing complete set was reused. */
  generatedSeconds: number | null;
}

const sameParams = (m: Marker, o: BenchOptions) => m.end === o.end && m.days === o.days && m.scale === o.scale && m.seed === o.seed;

async function readMarker(dir: string): Promise<Marker | null> {
  try {
    return JSON.parse(await readFile(path.join(dir, MARKER), 'utf8')) as Marker;
  } catch {
    return null;
  }
}

const writeMarker = (dir: string, o: BenchOptions, complete: boolean) =>
  writeFile(path.join(dir, MARKER), JSON.stringify({ end: o.end, days: o.days, scale: o.scale, seed: o.seed, complete } satisfies Marker) + '\n');

function runDemoData(o: BenchOptions): Promise<void> {
  const args = ['bin/fire-api.js', 'demo-data', '--out', o.dataDir, '--end', o.end, '--days', String(o.days), '--scale', String(o.scale), '--seed', String(o.seed)];
  return new Promise((resolve, reject) => {
    // The project's own CLI, in its own process: the bench measures the shipped generator's output.
    const child = ownChild(spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] }));
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`demo-data failed (code ${code}, signal ${signal})`))));
  });
}

/** Reuses a complete set made with the same parameters; never deletes a folder the bench did not fill. */
export async function ensureDataSet(o: BenchOptions, log: (line: string) => void): Promise<DataSet> {
  const marker = await readMarker(o.dataDir);
  if (marker?.complete && sameParams(marker, o)) {
    log(`data: reusing ${o.dataDir}`);
    return { dir: o.dataDir, generatedSeconds: null };
  }
  const entries = existsSync(o.dataDir) ? await readdir(o.dataDir) : [];
  if (entries.length > 0 && !marker) throw new Error(`${o.dataDir} holds files the bench did not write; give an empty or new --data-dir`);
  if (entries.length > 0) await rm(o.dataDir, { recursive: true, force: true });
  await mkdir(o.dataDir, { recursive: true });
  await writeMarker(o.dataDir, o, false);
  log(`data: generating ${o.days} days before ${o.end} at scale ${o.scale} into ${o.dataDir}`);
  const started = performance.now();
  await runDemoData(o);
  await writeMarker(o.dataDir, o, true);
  return { dir: o.dataDir, generatedSeconds: (performance.now() - started) / 1000 };
}

/** The dataset's Parquet files under the contract's naming rule (no `_` or `.` prefix), sorted. */
export async function listParquet(dataDir: string, dataset: string): Promise<string[]> {
  const entries = await readdir(path.join(dataDir, dataset), { recursive: true });
  return entries
    .filter((rel) => rel.endsWith('.parquet') && !rel.split(path.sep).some((part) => part.startsWith('_') || part.startsWith('.')))
    .map((rel) => path.join(dataDir, dataset, rel))
    .sort();
}

/** The one way a text becomes an SQL string (sql.ts). */
export const quoteSql = sqlString;

/** `read_parquet` over an explicit list: the glob alone would also pick up `_staging.parquet` files. */
export const readParquetSql = (files: readonly string[]): string =>
  `read_parquet([${files.map(quoteSql).join(', ')}], hive_partitioning = false)`;

/** Window bounds as explicit UTC instants, so no session time zone can shift them. */
export const windowWhere = (column: string, w: DayWindow): string =>
  `"${column}" >= TIMESTAMPTZ ${quoteSql(`${w.from} 00:00:00+00`)} AND "${column}" < TIMESTAMPTZ ${quoteSql(`${w.to} 00:00:00+00`)}`;

/** Exact row counts, from DuckDB, for each (dataset, time column, window) asked. */
export async function countRows(dataDir: string, asks: readonly { dataset: string; column: string; window: DayWindow }[]): Promise<number[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const counts: number[] = [];
    for (const a of asks) {
      const files = await listParquet(dataDir, a.dataset);
      if (files.length === 0) throw new Error(`no ${a.dataset} files under ${dataDir}`);
      const rows = (await connection.runAndReadAll(`SELECT count(*)::BIGINT FROM ${readParquetSql(files)} WHERE ${windowWhere(a.column, a.window)}`)).getRows();
      counts.push(Number(rows[0]?.[0] ?? Number.NaN));
    }
    return counts;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/**
 * Reads every file once so the server and the DuckDB reference both start from the page cache;
 * otherwise whichever runs first pays for the disk. Returns the bytes read.
 */
export async function warmPageCache(files: readonly string[]): Promise<number> {
  const buffer = Buffer.allocUnsafe(1 << 20);
  let total = 0;
  for (const file of files) {
    const handle = await open(file, 'r');
    try {
      for (let n; (n = (await handle.read(buffer, 0, buffer.length, null)).bytesRead) > 0; ) total += n;
    } finally {
      await handle.close();
    }
  }
  return total;
}
