// `fire-api ingest`: source files to partition files in the contract's layout and schema.

import os from 'node:os';
import path from 'node:path';
import type { DatasetDescriptor } from '../../../datasets/index.ts';
import { withWriterDb, writeWithOneThread } from '../../../queries/writer-db.ts';
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
  badRows: BadRow[];
  /** Rows given more than once in the input: written once. */
  repeatedInInput: number;
  alreadyPresent: number;
  rowsWritten: number;
  partitions: PartitionResult[];
  /** Why nothing was written (or, in a dry run, counted): bad rows without --skip-bad-rows, or an unreadable source file. */
  stopped: string | null;
}

/** Reads every source file into the stage file; bad rows and unreadable files are collected, not thrown. */
async function stageSources(opts: IngestOptions, stage: StageFile, bad: BadRow[], progress: (p: IngestProgress) => void): Promise<number> {
  let rowsRead = 0;
  for (const [fileNo, file] of opts.files.entries()) {
    try {
      for await (const source of sourceRows(opts.dataset, file, opts)) {
        rowsRead++;
        if ('problem' in source) bad.push({ file, line: source.line, problem: source.problem });
        else if (!stage.add(fileNo, source.line, source.row)) await stage.drained();
        if (rowsRead % 10_000 === 0) progress({ rowsRead, filesRead: fileNo, partitionsDone: 0, partitions: 0 });
      }
    } catch (e) {
      if (!(e instanceof FileProblem) && (e as NodeJS.ErrnoException).code === undefined) throw e;
      bad.push({ file, line: null, problem: e instanceof FileProblem ? e.message : `unreadable: ${(e as Error).message}` });
    }
    progress({ rowsRead, filesRead: fileNo + 1, partitionsDone: 0, partitions: 0 });
  }
  await stage.close();
  return rowsRead;
}

export async function ingest(opts: IngestOptions, progress: (p: IngestProgress) => void = () => undefined): Promise<IngestSummary> {
  const d = opts.dataset;
  return withWriterDb(os.availableParallelism(), async ({ connection, workDir }) => {
    const stage = new StageFile(path.join(workDir, 'stage.csv'));
    const badRows: BadRow[] = [];
    const rowsRead = await stageSources(opts, stage, badRows, progress);
    const summary: IngestSummary = { dataset: d.name, dryRun: opts.dryRun, rowsRead, badRows, repeatedInInput: 0, alreadyPresent: 0, rowsWritten: 0, partitions: [], stopped: null };
    if (badRows.some((b) => b.line === null)) return { ...summary, stopped: 'a source file could not be read' };
    if (badRows.length > 0 && !opts.skipBadRows) return { ...summary, stopped: 'bad rows (--skip-bad-rows writes the others)' };
    const unreadable = await loadStage(connection, d, stage.path);
    badRows.push(...unreadable.map((b) => ({ file: opts.files[b.file]!, line: b.line, problem: b.problem })));
    if (unreadable.length > 0 && !opts.skipBadRows) return { ...summary, stopped: 'bad rows (--skip-bad-rows writes the others)' };
    const distinct = await dedupeStage(connection, d);
    summary.repeatedInInput = stage.rows - unreadable.length - distinct;
    const parts = await stagedPartitions(connection);
    await writeWithOneThread(connection);
    const datasetDir = path.join(opts.dataDir, d.name);
    for (const part of parts) {
      const result = await writePartition(connection, d, datasetDir, part, opts.dryRun);
      summary.partitions.push(result);
      summary.alreadyPresent += result.present;
      summary.rowsWritten += result.rows - result.present;
      progress({ rowsRead, filesRead: opts.files.length, partitionsDone: summary.partitions.length, partitions: parts.length });
    }
    return summary;
  });
}
