import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { writeDemoData, type DemoDatasetSummary, type WriteDemoDataOptions } from '../../demo/write-demo-data.ts';

export type Row = Record<string, unknown>;

export interface Db {
  query(sql: string): Promise<Row[]>;
  close(): void;
}

/** A summer window crossing a month boundary: 2025-07-30, 2025-07-31, 2025-08-01. */
export const SMALL = { end: '2025-08-02', days: 3, seed: 7, scale: 0.3 } as const;

export async function makeTempDir(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'demo-data-'));
}

export async function writeInto(
  dir: string,
  options: Omit<WriteDemoDataOptions, 'outDir'> = SMALL,
): Promise<{ summaries: DemoDatasetSummary[]; messages: string[] }> {
  const messages: string[] = [];
  const summaries = await writeDemoData({ ...options, outDir: dir }, (message) => messages.push(message));
  return { summaries, messages };
}

export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

export async function openDb(): Promise<Db> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const connection = await instance.connect();
  await connection.run("SET TimeZone = 'UTC'");
  return {
    query: async (sql) => (await connection.runAndReadAll(sql)).getRowObjectsJS() as Row[],
    close: () => {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

/** Relative paths of every file under `dir`, sorted. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** Every data file of a dataset, read as it is stored: no Hive columns added. */
export function readAll(dir: string, dataset: string, depth: number): string {
  const glob = path.join(dir, dataset, ...Array.from({ length: depth }, () => '*'), '*.parquet');
  return `read_parquet('${glob}', hive_partitioning = false, filename = true, file_row_number = true)`;
}

export const num = (value: unknown): number => Number(value);
