import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DatasetDescriptor } from '../datasets/index.ts';
import { DatasetUnavailableError } from './errors.ts';
import { parseInstant, type Instant } from './instant.ts';
import { supersededNames } from './superseded.ts';
import type { Window } from './window.ts';

export interface DataFile {
  path: string;
  size: number;
  mtimeMs: number;
  /** The time range of the partition the file lies in; every row must fall inside it. */
  partition?: { start: Instant; end: Instant };
}

export interface Partition {
  /** Partition key value, e.g. `2025-06-01` or `2025-06`. */
  key: string;
  start: Instant;
  end: Instant;
  files: DataFile[];
}


/** Names the operator uses for work in progress, and anything that is not Parquet, are never read. */
export const isDataFileName = (name: string): boolean => !/^[._]/.test(name) && name.endsWith('.parquet');

const ignoredEntry = (name: string): boolean => /^[._]/.test(name);

async function listDir(dir: string, dataset: string) {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch {
    throw new DatasetUnavailableError(dataset, 'folder missing or unreadable');
  }
}

/** Data files directly in `dir` (less those a compacted file replaces), sorted by name so listings are deterministic. */
export async function listFiles(dir: string, dataset: string): Promise<DataFile[]> {
  const entries = (await listDir(dir, dataset)).filter((e) => e.isFile() && isDataFileName(e.name));
  const listed = entries.map((e) => e.name).sort();
  const superseded = await supersededNames(dir, listed);
  const names = listed.filter((name) => !superseded.has(name));
  return Promise.all(
    names.map(async (name) => {
      const p = path.join(dir, name);
      const s = await stat(p).catch(() => {
        throw new DatasetUnavailableError(dataset, 'file vanished while listing');
      });
      return { path: p, size: s.size, mtimeMs: s.mtimeMs };
    }),
  );
}

/** Values `v` of sub-folders `key=v` of `dir` (e.g. the models of fire-danger), sorted. */
export async function listKeyValues(dir: string, key: string, dataset: string): Promise<string[]> {
  const entries = await listDir(dir, dataset);
  const prefix = `${key}=`;
  return entries
    .filter((e) => e.isDirectory() && !ignoredEntry(e.name) && e.name.startsWith(prefix) && e.name.length > prefix.length)
    .map((e) => e.name.slice(prefix.length))
    .sort();
}

/** [start, end) of a `date=` or `month=` partition key, or null when the key is malformed. */
export function partitionRange(kind: 'date' | 'month', key: string): { start: Instant; end: Instant } | null {
  const pattern = kind === 'date' ? /^\d{4}-\d{2}-\d{2}$/ : /^\d{4}-\d{2}$/;
  if (!pattern.test(key)) return null;
  const start = parseInstant(kind === 'date' ? key : `${key}-01`);
  if (start === null) return null;
  const d = new Date(Number(start / 1000n));
  if (kind === 'date') d.setUTCDate(d.getUTCDate() + 1);
  else d.setUTCMonth(d.getUTCMonth() + 1);
  return { start, end: BigInt(d.getTime()) * 1000n };
}

/** Sub-folders of `dir` named like partitions (`date=...`) whose key is not a valid one: never read. */
export async function malformedPartitionFolders(dir: string, d: DatasetDescriptor): Promise<string[]> {
  const time = d.time;
  if (!time) return [];
  const keys = await listKeyValues(dir, time.partition, d.name);
  return keys.filter((key) => partitionRange(time.partition, key) === null).map((key) => `${time.partition}=${key}`);
}

/** Partitions of `dir` overlapping the window, in time order, with their data files. */
export async function listPartitions(dir: string, d: DatasetDescriptor, window: Window): Promise<Partition[]> {
  const time = d.time;
  if (!time) throw new Error(`${d.name} is not partitioned by time`);
  const keys = await listKeyValues(dir, time.partition, d.name);
  const ranges = keys
    .map((key) => ({ key, ...partitionRange(time.partition, key) }))
    .filter((p): p is { key: string; start: Instant; end: Instant } => p.start !== undefined && p.end !== undefined)
    .filter((p) => p.start < window.to && p.end > window.from);
  return Promise.all(
    ranges.map(async (p) => {
      const files = await listFiles(path.join(dir, `${time.partition}=${p.key}`), d.name);
      return { ...p, files: files.map((f) => ({ ...f, partition: { start: p.start, end: p.end } })) };
    }),
  );
}
