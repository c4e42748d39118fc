import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { STATIONS_DATASET, type DatasetDescriptor } from '../../datasets/index.ts';
import { readChain, type Observation } from '../files/chain.ts';
import { chooseCorrection, CorrectionStore, type PublishedModel } from '../files/corrections.ts';
import { DataParameterError, DatasetUnavailableError } from '../errors.ts';
import type { FileChecker, FileFacts, FileVerdict } from '../files/check.ts';
import { fingerprint } from '../files/footer.ts';
import type { DataFile } from '../files/data-file.ts';
import type { FolderListings } from '../files/folder-listings.ts';
import { datasetFolders, listFiles, listPartitions, type Partition } from '../files/partitions.ts';
import type { Window } from '../window.ts';

export interface SourceRequest {
  descriptor: DatasetDescriptor;
  window: Window | null;
  /** Value of the folder choice parameter (e.g. model) when given. */
  folderValue: string | undefined;
  needsStations: boolean;
  /** The corrected series is asked for (with the model pinned, if one is); null: it is not. */
  correction: { pinned: string | undefined } | null;
}

export interface Sources {
  observation: Observation;
  partitions: Partition[];
  folderValue: string | null;
  /** The correction model applied (the corrected series with a model published); null otherwise. */
  correction: PublishedModel | null;
  stationFiles: DataFile[] | null;
  /** Fingerprint of every file listed for the window (the ETag's data part). */
  dataVersion: string;
  /** Footer hash of each listed file, and of the station files, for finer fingerprints. */
  footerHashes: ReadonlyMap<string, string>;
  stationHashes: readonly string[];
  /** Listed files whose rows are stored in ascending order key (see FileVerdict). */
  sortedFiles: ReadonlySet<string>;
  /** Rows in all listed files (not only inside the window), or null when a file's count is unknown. */
  fileRows: number | null;
  /** Rows of each listed file by its footer (absent when unknown): an upper bound of its rows in any window. */
  rowsByFile: ReadonlyMap<string, number>;
  /** What each listed file's rows were found to be, when inspected (FileFacts; absent: nothing known). */
  factsByFile?: ReadonlyMap<string, FileFacts>;
}

export interface CheckContext {
  dataDir: string;
  checker: FileChecker;
  /** A connection, asked for only when a file's check is not cached yet. */
  connection: () => Promise<DuckDBConnection>;
  nowMs: number;
  /** DuckDB forgets an interrupt sent between statements: each step checks the request is still wanted. */
  signal: AbortSignal;
  /** Runs `run` on the request's connection and the idle ones lent for checking many files at once (withIdleHelpers). */
  fanOut?: <T>(own: DuckDBConnection, run: (connections: readonly DuckDBConnection[]) => Promise<T>) => Promise<T>;
  /** Folder listings kept while their folders are unchanged. */
  listings?: FolderListings;
  /** Published correction models (absent: read afresh). */
  corrections?: CorrectionStore;
}

/**
 * Verdicts for files nobody has checked yet, on the request's connection and, for more than one,
 * on idle ones side by side (a cold window of a year is hundreds of checks). Stops handing out
 * files at the first failure or abort.
 */
async function checkMissing(ctx: CheckContext, d: DatasetDescriptor, files: readonly DataFile[]): Promise<(FileVerdict | undefined)[]> {
  const verdicts: (FileVerdict | undefined)[] = [];
  const own = await ctx.connection();
  let next = 0;
  let failed = false;
  const worker = async (c: DuckDBConnection) => {
    while (next < files.length && !failed && !ctx.signal.aborted) {
      const i = next++;
      // The facts are the start-up and background checks' to find: a request does not wait for them.
      verdicts[i] = await ctx.checker.check(c, d, files[i]!, ctx.signal, { facts: false });
      failed ||= !verdicts[i]!.ok;
    }
  };
  // Every worker is awaited before the helpers go back: none is mid-statement then.
  const checkOn = async (connections: readonly DuckDBConnection[]) => void (await Promise.allSettled(connections.map(worker)));
  await (files.length > 1 && ctx.fanOut ? ctx.fanOut(own, checkOn) : checkOn([own]));
  ctx.signal.throwIfAborted();
  return verdicts;
}

async function datasetDir(ctx: CheckContext, d: DatasetDescriptor): Promise<{ dir: string; observation: Observation }> {
  const dir = path.join(ctx.dataDir, d.name);
  const chain = await readChain(dir, ctx.nowMs, ctx.listings);
  if (!chain.available) throw new DatasetUnavailableError(d.name, chain.reason);
  return { dir, observation: chain.observation };
}

async function chooseFolder(ctx: CheckContext, dir: string, d: DatasetDescriptor, value: string | undefined): Promise<{ dir: string; value: string | null }> {
  const choice = d.folderChoice;
  if (!choice) return { dir, value: null };
  const folders = await datasetFolders(dir, d, ctx.listings);
  if (folders.length === 0) throw new DatasetUnavailableError(d.name, `no ${choice.key} folders`);
  const wanted = value ?? folders[0]!.value ?? '';
  const chosen = folders.find((f) => f.value === wanted);
  if (!chosen) {
    // Only a value that could be a folder name is quoted back; anything else is hostile or a mistake.
    const shown = /^[A-Za-z0-9._-]{1,64}$/.test(wanted) ? ` '${wanted}'` : '';
    throw new DataParameterError(choice.param, `unknown ${choice.param}${shown}; valid values: ${folders.map((f) => f.value).join(', ')}`);
  }
  return chosen;
}

/** Every file must be complete Parquet with the descriptor's schema, or the window is unavailable. */
async function checkFiles(ctx: CheckContext, d: DatasetDescriptor, files: readonly DataFile[]): Promise<{ hashes: Map<string, string>; sorted: Set<string>; rows: number | null; rowsByFile: Map<string, number>; factsByFile: Map<string, FileFacts> }> {
  ctx.signal.throwIfAborted();
  const verdicts = files.map((f) => ctx.checker.cached(d, f));
  const missing = files.flatMap((f, i) => (verdicts[i] ? [] : [i]));
  if (missing.length > 0) {
    const found = await checkMissing(ctx, d, missing.map((i) => files[i]!));
    missing.forEach((i, k) => (verdicts[i] = found[k]));
  }
  const hashes = new Map<string, string>();
  const sorted = new Set<string>();
  const rowsByFile = new Map<string, number>();
  const factsByFile = new Map<string, FileFacts>();
  let rows: number | null = 0;
  files.forEach((f, i) => {
    const verdict = verdicts[i];
    // Files are handed out in order, so any left unchecked come after the failure reported here first.
    if (!verdict) throw new Error(`file check of ${path.relative(ctx.dataDir, f.path)} did not finish`);
    if (!verdict.ok) throw new DatasetUnavailableError(d.name, `file ${path.relative(ctx.dataDir, f.path)}: ${verdict.problem}`);
    hashes.set(f.path, verdict.footerHash);
    if (verdict.sorted) sorted.add(f.path);
    if (verdict.rows !== null) rowsByFile.set(f.path, verdict.rows);
    if (verdict.facts) factsByFile.set(f.path, verdict.facts);
    rows = rows === null || verdict.rows === null ? null : rows + verdict.rows;
  });
  return { hashes, sorted, rows, rowsByFile, factsByFile };
}

/** The applied model's content hash, when there is one: a part of the data version of what is served. */
export const modelHashes = (correction: PublishedModel | null): string[] => (correction ? [`correction:${correction.hash}`] : []);

/** Lists, prunes and checks what a request will read, before any byte of the response exists. */
export async function resolveSources(ctx: CheckContext, req: SourceRequest): Promise<Sources> {
  const d = req.descriptor;
  const { dir, observation } = await datasetDir(ctx, d);
  const folder = await chooseFolder(ctx, dir, d, req.folderValue);
  const correction = req.correction ? await chooseCorrection(ctx.corrections ?? new CorrectionStore(ctx.dataDir), d, req.correction.pinned) : null;
  const partitions: Partition[] =
    d.time && req.window
      ? await listPartitions(folder.dir, d, req.window, ctx.listings)
      : [{ key: '', start: 0n, end: 0n, files: await listFiles(folder.dir, d.name, ctx.listings) }];
  const { hashes: footerHashes, sorted: sortedFiles, rows: fileRows, rowsByFile, factsByFile } = await checkFiles(ctx, d, partitions.flatMap((p) => p.files));
  let stationFiles: DataFile[] | null = null;
  let stationHashes: string[] = [];
  if (req.needsStations) {
    const stations = await datasetDir(ctx, STATIONS_DATASET);
    stationFiles = await listFiles(stations.dir, STATIONS_DATASET.name, ctx.listings);
    stationHashes = [...(await checkFiles(ctx, STATIONS_DATASET, stationFiles)).hashes.values()];
  }
  const dataVersion = fingerprint([...footerHashes.values(), ...stationHashes, ...modelHashes(correction)]);
  return { observation, partitions, folderValue: folder.value, correction, stationFiles, dataVersion, footerHashes, stationHashes, sortedFiles, fileRows, rowsByFile, factsByFile };
}
