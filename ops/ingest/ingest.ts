// `fire-api ingest`: source files to partition files in the contract's layout and schema.

import os from 'node:os';
import path from 'node:path';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { withWriterDb, writeWithOneThread } from '../../demo/writer-db.ts';
import { withDatasetLock } from '../ops-lock.ts';
import { sourceRows, type SourceOptions } from './sources.ts';
import { StageFile } from './stage-file.ts';
import { FileProblem } from './values.ts';
import { dedupeStage, loadStage, stagedPartitions, writePartition, type PartitionResult } from './write-partitions.ts';

export interface IngestOptions extends SourceOptions {
  dataDir: string;
  dataset: DatasetDescriptor;
  files: readonly string[];
  skipBadRows: boolean;
  dryRun: boolean;
}

export interface BadRow {
  file: string;
  /** Line of a CSV file, or 1-based feature number of a GeoJSON file or shapefile; null for the whole file. */
  line: number | null;
  problem: string;
}

/** Bad rows kept for the report: the first thousand (a wholly wrong file can have millions), every unreadable file. */
const KEPT_BAD_ROWS = 1000;

class BadRows {
  readonly kept: BadRow[] = [];
  count = 0;
  unreadableFile = false;

  add(b: BadRow): void {
    this.count++;
    this.unreadableFile ||= b.line === null;
    if (this.kept.length < KEPT_BAD_ROWS || b.line === null) this.kept.push(b);
  }
}

export interface IngestProgress {
  rowsRead: number;
  filesRead: number;
  partitionsDone: number;
  partitions: number;
}

export interface IngestSummary {
  dataset: string;
  dryRun: boolean;
  rowsRead: number;
  /** The first bad rows found (and every unreadable file); `badRowCount` counts them all. */
  badRows: BadRow[];
  badRowCount: number;
  /** Rows given more than once in the input: written once. */
  repeatedInInput: number;
  alreadyPresent: number;
  rowsWritten: number;
  partitions: PartitionResult[];
  /** Why nothing was written (or, in a dry run, counted): bad rows without --skip-bad-rows, or an unreadable source file. */
  stopped: string | null;
}

/** Reads every source file into the stage file; bad rows and unreadable files are collected, not thrown. */
async function stageSources(opts: IngestOptions, stage: StageFile, bad: BadRows, progress: (p: IngestProgress) => void): Promise<number> {
  let rowsRead = 0;
  for (const [fileNo, file] of opts.files.entries()) {
    try {
      for await (const source of sourceRows(opts.dataset, file, opts)) {
        rowsRead++;
        if ('problem' in source) bad.add({ file, line: source.line, problem: source.problem });
        else if (!stage.add(fileNo, source.line, source.row)) await stage.drained();
        if (rowsRead % 10_000 === 0) progress({ rowsRead, filesRead: fileNo, partitionsDone: 0, partitions: 0 });
      }
    } catch (e) {
      if (!(e instanceof FileProblem) && (e as NodeJS.ErrnoException).code === undefined) throw e;
      bad.add({ file, line: null, problem: e instanceof FileProblem ? e.message : `unreadable: ${(e as Error).message}` });
    }
    progress({ rowsRead, filesRead: fileNo + 1, partitionsDone: 0, partitions: 0 });
  }
  await stage.close();
  return rowsRead;
}

const BAD_ROWS_STOP = 'bad rows (--skip-bad-rows writes the others)';

/** Reads, checks and writes under the dataset's operator lock (a dry run writes nothing and takes none). */
export async function ingest(opts: IngestOptions, progress: (p: IngestProgress) => void = () => undefined): Promise<IngestSummary> {
  const run = () => ingestUnlocked(opts, progress);
  return opts.dryRun ? run() : withDatasetLock(path.join(opts.dataDir, opts.dataset.name), run);
}

async function ingestUnlocked(opts: IngestOptions, progress: (p: IngestProgress) => void): Promise<IngestSummary> {
  const d = opts.dataset;
  return withWriterDb(os.availableParallelism(), async ({ connection, workDir }) => {
    const stage = new StageFile(path.join(workDir, 'stage.csv'));
    const bad = new BadRows();
    const rowsRead = await stageSources(opts, stage, bad, progress);
    const summary = (stopped: string | null): IngestSummary => ({ dataset: d.name, dryRun: opts.dryRun, rowsRead, badRows: bad.kept, badRowCount: bad.count, repeatedInInput: 0, alreadyPresent: 0, rowsWritten: 0, partitions: [], stopped });
    if (bad.unreadableFile) return summary('a source file could not be read');
    const refuse = () => bad.count > 0 && !opts.skipBadRows;
    if (refuse()) return summary(BAD_ROWS_STOP);
    const unreadable = await loadStage(connection, d, stage.path);
    unreadable.forEach((b) => bad.add({ file: opts.files[b.file]!, line: b.line, problem: b.problem }));
    if (refuse()) return summary(BAD_ROWS_STOP);
    const distinct = await dedupeStage(connection, d);
    const done = summary(null);
    done.repeatedInInput = stage.rows - unreadable.length - distinct;
    const parts = await stagedPartitions(connection);
    await writeWithOneThread(connection);
    const datasetDir = path.join(opts.dataDir, d.name);
    for (const part of parts) {
      const result = await writePartition(connection, d, datasetDir, part, opts.dryRun).catch((e: Error) => e);
      // Partitions already written stay: the same ingest again adds only what is missing.
      if (result instanceof Error) return { ...done, stopped: `${part.dir}: ${result.message.split('\n')[0]} (${done.partitions.length} partitions before it written; run the same ingest again once it is fixed)` };
      done.partitions.push(result);
      done.alreadyPresent += result.present;
      done.rowsWritten += result.rows - result.present;
      progress({ rowsRead, filesRead: opts.files.length, partitionsDone: done.partitions.length, partitions: parts.length });
    }
    return done;
  });
}
