import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { CHAIN_FILE } from './chain.ts';
import type { DataFile } from './data-file.ts';
import type { FolderListings } from './folder-listings.ts';
import { DatasetUnavailableError } from '../errors.ts';
import { parseInstant, type Instant } from '../instant.ts';
import { supersededNames } from './superseded.ts';
import { statusOf } from './status.ts';
import { ALL_TIME, type Window } from '../window.ts';


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

/**
 * Data files directly in `dir` (less those a compacted file replaces), sorted by name so listings
 * are deterministic, and the names never read.
 */
async function readFolder(dir: string, dataset: string, listings?: FolderListings): Promise<{ files: DataFile[]; ignored: string[] }> {
  const { names, ignored } = await (listings ? listings.of(dir, 'files', () => fileNames(dir, dataset)) : fileNames(dir, dataset));
  const listedMs = Date.now();
  const files = await Promise.all(
    names.map(async (name) => {
      const p = path.join(dir, name);
      const s = await statusOf(p).catch(() => {
        throw new DatasetUnavailableError(dataset, 'file vanished while listing');
      });
      return { path: p, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino, ctimeMs: s.ctimeMs, listedMs };
    }),
  );
  return { files, ignored };
}

/** The names of the data files directly in `dir` (less those a compacted file replaces), and the names never read. */
async function fileNames(dir: string, dataset: string): Promise<{ names: string[]; ignored: string[] }> {
  const entries = (await listDir(dir, dataset)).filter((e) => e.isFile());
  const listed = entries.filter((e) => isDataFileName(e.name)).map((e) => e.name).sort();
  const superseded = await supersededNames(dir, listed);
  const ignored = entries.filter((e) => !isDataFileName(e.name) && e.name !== CHAIN_FILE).map((e) => e.name).sort();
  return { names: listed.filter((name) => !superseded.has(name)), ignored };
}

/** Data files directly in `dir`, sorted by name: the one place a folder's files are listed. */
export async function listFiles(dir: string, dataset: string, listings?: FolderListings): Promise<DataFile[]> {
  return (await readFolder(dir, dataset, listings)).files;
}

/** Values `v` of sub-folders `key=v` of `dir` (e.g. the models of fire-danger), sorted. */
export async function listKeyValues(dir: string, key: string, dataset: string, listings?: FolderListings): Promise<string[]> {
  const values = async () => keyValues(await listDir(dir, dataset), key);
  return listings ? listings.of(dir, `key ${key}`, values) : values();
}

function keyValues(entries: Dirent[], key: string): string[] {
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

/** Partition folders of `dir` overlapping the window, in time order. */
async function partitionFolders(dir: string, d: DatasetDescriptor, window: Window, listings?: FolderListings): Promise<PartitionFolder[]> {
  const time = d.time;
  if (!time) throw new Error(`${d.name} is not partitioned by time`);
  const all = async () =>
    (await listKeyValues(dir, time.partition, d.name))
      .map((key) => ({ key, ...partitionRange(time.partition, key), dir: path.join(dir, `${time.partition}=${key}`) }))
      .filter((p): p is PartitionFolder => p.start !== undefined && p.end !== undefined);
  const folders = await (listings ? listings.of(dir, `partitions ${time.partition}`, all) : all());
  return folders.filter((p) => p.start < window.to && p.end > window.from);
}

interface PartitionFolder {
  key: string;
  start: Instant;
  end: Instant;
  dir: string;
}

const inPartition = (files: DataFile[], p: { start: Instant; end: Instant }) => files.map((f) => ({ ...f, partition: { start: p.start, end: p.end } }));

/** Partitions of `dir` overlapping the window, in time order, with their data files. */
export async function listPartitions(dir: string, d: DatasetDescriptor, window: Window, listings?: FolderListings): Promise<Partition[]> {
  return Promise.all(
    (await partitionFolders(dir, d, window, listings)).map(async ({ dir: folder, ...p }) => ({ ...p, files: inPartition(await listFiles(folder, d.name, listings), p) })),
  );
}

/** The folders a dataset's files are under: its own, or one per folder choice (fire-danger's `model=`). */
export async function datasetFolders(dir: string, d: DatasetDescriptor, listings?: FolderListings): Promise<{ dir: string; value: string | null }[]> {
  const choice = d.folderChoice;
  if (!choice) return [{ dir, value: null }];
  return (await listKeyValues(dir, choice.key, d.name, listings)).map((value) => ({ dir: path.join(dir, `${choice.key}=${value}`), value }));
}

/** Everything in a dataset's folder, paths relative to `DATA_DIR` except the files'. */
export interface DatasetListing {
  /** Every file the server may serve, each with its partition's range when partitioned. */
  files: DataFile[];
  /** Partition folders never read because their key is malformed (`date=2025-8-1`). */
  malformedFolders: string[];
  /** Files in data folders never read: hidden, `_`-prefixed or not Parquet. */
  ignoredNames: string[];
}

/**
 * Every file of a dataset: the one listing behind `fire-api check`, the start-up and background
 * checks. Requests list the same folders (datasetFolders, listPartitions), pruned to their window.
 */
export async function listDatasetFiles(dataDir: string, d: DatasetDescriptor): Promise<DatasetListing> {
  const listing: DatasetListing = { files: [], malformedFolders: [], ignoredNames: [] };
  const add = (dir: string, found: { files: DataFile[]; ignored: string[] }) => {
    listing.files.push(...found.files);
    listing.ignoredNames.push(...found.ignored.map((name) => path.relative(dataDir, path.join(dir, name))));
  };
  for (const folder of await datasetFolders(path.join(dataDir, d.name), d)) {
    if (!d.time) add(folder.dir, await readFolder(folder.dir, d.name));
    for (const p of d.time ? await partitionFolders(folder.dir, d, ALL_TIME) : []) {
      const found = await readFolder(p.dir, d.name);
      add(p.dir, { files: inPartition(found.files, p), ignored: found.ignored });
    }
    for (const name of await malformedPartitionFolders(folder.dir, d)) listing.malformedFolders.push(path.relative(dataDir, path.join(folder.dir, name)));
  }
  return listing;
}

/**
 * The time the partition folders of a dataset cover, from the first one's start to the last one's
 * end (every folder choice together); null when it has none. Folder names only: no file is read.
 */
export async function partitionSpan(dataDir: string, d: DatasetDescriptor): Promise<{ start: Instant; end: Instant } | null> {
  if (!d.time) return null;
  let span: { start: Instant; end: Instant } | null = null;
  for (const folder of await datasetFolders(path.join(dataDir, d.name), d)) {
    for (const p of await partitionFolders(folder.dir, d, ALL_TIME)) {
      span = span ? { start: p.start < span.start ? p.start : span.start, end: p.end > span.end ? p.end : span.end } : { start: p.start, end: p.end };
    }
  }
  return span;
}
