// `fire-api compact`: each partition holding several files (or one unsorted file) rewritten as
// one file sorted by the order key, beside a live server. The new file is written hidden, names
// the files it replaces in its footer (queries/files/superseded.ts: listings leave those out from the
// moment it appears), is renamed into place, and only then are the replaced files deleted.

import { createHash } from 'node:crypto';
import { readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { fileColumns, type DatasetDescriptor } from '../datasets/index.ts';
import { FileChecker, type FileVerdict } from '../queries/files/check.ts';
import { hashFooter } from '../queries/files/footer.ts';
import type { DataFile } from '../queries/files/data-file.ts';
import { isDataFileName, listFiles, listKeyValues, listPartitions } from '../queries/files/partitions.ts';
import { SUPERSEDES_KEY, supersededNames } from '../queries/files/superseded.ts';
import { ident, quoteFilePath, sqlString } from '../queries/sql/sql.ts';
import { ALL_TIME, type Window } from '../queries/window.ts';
import { withWriterDb, writeWithOneThread } from '../demo/writer-db.ts';
import { withDatasetLock } from './ops-lock.ts';

export interface CompactOptions {
  dataDir: string;
  dataset: DatasetDescriptor;
  /** Partitions overlapping this window; all when null. */
  window: Window | null;
  dryRun: boolean;
}

export type PartitionOutcome =
  | { dir: string; state: 'compacted'; files: number; rows: number; seconds: number; file: string | null }
  | { dir: string; state: 'compact' }
  | { dir: string; state: 'failing'; problem: string };

export interface CompactSummary {
  dataset: string;
  dryRun: boolean;
  partitions: PartitionOutcome[];
  /** Files an earlier, interrupted compaction had replaced but not yet deleted, deleted now. */
  leftoversRemoved: number;
}

interface Folder {
  dir: string;
  /** The partition's time range, which the file check needs; null for a dataset without partitions. */
  range: { start: bigint; end: bigint } | null;
}

/** Partition folders of the dataset in the window (per model for fire danger), oldest first. */
async function partitionFolders(opts: CompactOptions): Promise<Folder[]> {
  const d = opts.dataset;
  const root = path.join(opts.dataDir, d.name);
  const roots = d.folderChoice ? (await listKeyValues(root, d.folderChoice.key, d.name)).map((v) => path.join(root, `${d.folderChoice!.key}=${v}`)) : [root];
  const out: Folder[] = [];
  for (const dir of roots) {
    if (!d.time) out.push({ dir, range: null });
    else for (const p of await listPartitions(dir, d, opts.window ?? ALL_TIME)) out.push({ dir: path.join(dir, `${d.time.partition}=${p.key}`), range: { start: p.start, end: p.end } });
  }
  return out;
}

/** Deletes files a compacted file beside them replaces (left by a compaction that stopped before deleting). */
async function removeLeftovers(dir: string): Promise<number> {
  const names = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isFile() && isDataFileName(e.name)).map((e) => e.name);
  const superseded = await supersededNames(dir, names);
  for (const name of superseded) await rm(path.join(dir, name), { force: true });
  return superseded.size;
}

/** Deletes each replaced file unless it was replaced meanwhile (another file under the same name). */
async function deleteReplaced(files: readonly DataFile[], replaced: readonly { footerSha256: string }[]): Promise<void> {
  for (const [i, f] of files.entries()) {
    const s = await stat(f.path).catch(() => null);
    const now = s ? await hashFooter({ ...f, size: s.size }).catch(() => null) : null;
    if (now === replaced[i]!.footerSha256) await unlink(f.path).catch(() => undefined);
  }
}

/** Writes the partition's rows as one sorted file, hidden, then in place; then deletes the files it replaces. */
async function rewrite(c: DuckDBConnection, opts: CompactOptions, dir: string, files: DataFile[], verdicts: FileVerdict[]): Promise<{ rows: number; file: string }> {
  const d = opts.dataset;
  const replaced = files.map((f, i) => ({ name: path.basename(f.path), footerSha256: (verdicts[i] as { footerHash: string }).footerHash }));
  const name = `compacted-${createHash('sha256').update(replaced.map((r) => r.footerSha256).sort().join(',')).digest('hex').slice(0, 16)}.parquet`;
  const hidden = path.join(dir, `_${name}`);
  const columns = fileColumns(d).map((col) => ident(col.name)).join(', ');
  const source = `read_parquet([${files.map((f) => quoteFilePath(f.path, opts.dataDir)).join(', ')}], hive_partitioning = false)`;
  const kv = `KV_METADATA {${sqlString(SUPERSEDES_KEY)}: ${sqlString(JSON.stringify(replaced))}}`;
  let rows: number;
  try {
    const copied = await c.runAndReadAll(`COPY (SELECT ${columns} FROM ${source} ORDER BY ${d.orderBy.map(ident).join(', ')}) TO ${sqlString(hidden)} (FORMAT parquet, ${kv})`);
    rows = Number(copied.getRows()[0]?.[0] ?? -1);
    const counts = verdicts.map((v) => (v.ok ? v.rows : null));
    const expected = counts.reduce<number>((n, v) => n + (v ?? 0), 0);
    if (counts.every((v) => v !== null) && rows !== expected) throw new Error(`${path.relative(opts.dataDir, dir)}: wrote ${rows} rows, the files hold ${expected}`);
    await rename(hidden, path.join(dir, name));
  } finally {
    await rm(hidden, { force: true });
  }
  // From here every listing leaves the replaced files out.
  await deleteReplaced(files, replaced);
  return { rows, file: path.relative(path.join(opts.dataDir, d.name), path.join(dir, name)) };
}

async function compactPartition(c: DuckDBConnection, checker: FileChecker, opts: CompactOptions, { dir, range }: Folder): Promise<PartitionOutcome> {
  const rel = path.relative(path.join(opts.dataDir, opts.dataset.name), dir) || '.';
  // Listed now, not at the start: files come and go while earlier partitions are rewritten.
  const files = (await listFiles(dir, opts.dataset.name)).map((f) => (range ? { ...f, partition: range } : f));
  const verdicts: FileVerdict[] = [];
  for (const f of files) verdicts.push(await checker.check(c, opts.dataset, f));
  const failing = verdicts.findIndex((v) => !v.ok);
  if (failing >= 0) return { dir: rel, state: 'failing', problem: `${path.basename(files[failing]!.path)}: ${(verdicts[failing] as { problem: string }).problem}` };
  // The check knows order only within a time partition; a lone file of the stations is compact as it is.
  if (files.length === 0 || (files.length === 1 && (!range || (verdicts[0]!.ok && verdicts[0]!.sorted)))) return { dir: rel, state: 'compact' };
  const started = performance.now();
  if (opts.dryRun) return { dir: rel, state: 'compacted', files: files.length, rows: verdicts.reduce((n, v) => n + ((v.ok && v.rows) || 0), 0), seconds: 0, file: null };
  const written = await rewrite(c, opts, dir, files, verdicts);
  return { dir: rel, state: 'compacted', files: files.length, rows: written.rows, seconds: (performance.now() - started) / 1000, file: written.file };
}

/** Rewrites under the dataset's operator lock (a dry run writes nothing and takes none). */
export async function compact(opts: CompactOptions, progress: (done: number, total: number) => void = () => undefined): Promise<CompactSummary> {
  const run = () => compactUnlocked(opts, progress);
  return opts.dryRun ? run() : withDatasetLock(path.join(opts.dataDir, opts.dataset.name), run);
}

async function compactUnlocked(opts: CompactOptions, progress: (done: number, total: number) => void): Promise<CompactSummary> {
  const summary: CompactSummary = { dataset: opts.dataset.name, dryRun: opts.dryRun, partitions: [], leftoversRemoved: 0 };
  const folders = await partitionFolders(opts);
  await withWriterDb(os.availableParallelism(), async ({ connection }) => {
    await writeWithOneThread(connection);
    const checker = new FileChecker(opts.dataDir);
    for (const folder of folders) {
      if (!opts.dryRun) summary.leftoversRemoved += await removeLeftovers(folder.dir);
      summary.partitions.push(await compactPartition(connection, checker, opts, folder));
      progress(summary.partitions.length, folders.length);
    }
  });
  return summary;
}
