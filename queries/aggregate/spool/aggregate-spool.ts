import { rmSync } from 'node:fs';
import { open, rm, stat, type FileHandle } from 'node:fs/promises';
import { quoteFilePath } from '../../sql/sql.ts';
import type { DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import type { Reservation, TempBudget } from '../../engine/temp-budget.ts';
import type { Compiled } from '../../sql/compile.ts';
import type { Instant } from '../../instant.ts';
import { RowWriter } from '../aggregate-codec.ts';
import type { AggregateColumn, AggregateRow } from '../aggregate-rows.ts';
import { tempFileBase } from '../../encode/copy-stream.ts';
import { addToRuns, type BucketRun } from '../buckets.ts';

/** Where a spool lives and what it may take: TEMP_DIR's own folder and budget, the request's signal. */
export interface SpoolPlace {
  dir: string;
  budget: TempBudget;
  signal: AbortSignal;
}

/** Reads a result chunk a group at a time (aggregate-rows.ts chunkVisitor), given the result's columns. */
export type ChunkVisitor = (names: readonly string[]) => (chunk: DuckDBDataChunk, visit: (row: AggregateRow) => void) => void;

/** One part's groups on disk: how many, and each bucket's run of groups in order (bucket, groups). */
export interface SpooledPart {
  path: string;
  rows: number;
  runs: BucketRun[];
}

/** Temp space is reserved for a spool in steps of this size as it grows. */
const RESERVE_STEP_BYTES = 16 * 1024 * 1024;

/**
 * A spool's temp files and the temp space they hold; `dispose` removes them all and gives the
 * space back (idempotent). The bytes counted are those on disk now: a file removed gives its
 * share back to the files to come (the reservation itself only grows, so a part's Parquet file
 * may briefly take more than reserved until counted, as an extract's file may).
 */
export class Spool {
  readonly reservation: Reservation;
  private readonly paths = new Set<string>();
  private bytes = 0;
  private disposed = false;

  constructor(readonly place: SpoolPlace) {
    this.reservation = place.budget.reserve(0);
  }

  /** A new temp file's path, removed with the spool (none once it is gone: the request has ended). */
  file(suffix: string): string {
    if (this.disposed) this.gone();
    const path = `${tempFileBase(this.place.dir)}-${suffix}`;
    this.paths.add(path);
    return path;
  }

  /** Room for `more` bytes besides those held, reserved a step at a time while there is room (a 503 when the budget is full, as for extracts); none once the spool is gone. */
  grow(more: number): void {
    if (this.disposed) this.gone();
    this.bytes += more;
    if (this.bytes <= this.reservation.bytes) return;
    const budget = this.place.budget;
    this.reservation.growTo(Math.max(this.bytes, this.reservation.bytes + Math.min(RESERVE_STEP_BYTES, budget.maxBytes - budget.usedBytes)));
  }

  /** Removes one of its files from the folder now (an open one stays readable until closed). */
  forget(path: string): void {
    this.paths.delete(path);
    rmSync(path, { force: true });
  }

  /** Removes one of its files of `size` bytes (the space it took stays reserved, for the files to come). */
  async remove(path: string, size: number): Promise<void> {
    this.paths.delete(path);
    this.bytes -= size;
    await rm(path, { force: true });
  }

  /** Throws, the file at `path` removed, when the spool went while the file was being created (it would outlive the request). */
  created(path: string): void {
    if (!this.disposed) return;
    rmSync(path, { force: true });
    this.gone();
  }

  /**
   * Throws for work that comes after the spool went: the request's own reason when it was stopped
   * (its client gone, its time spent: the spool goes with the signal, and a part still running on
   * another connection must not turn that into an internal error), a bug otherwise.
   */
  private gone(): never {
    this.place.signal.throwIfAborted();
    throw new Error('the aggregate\'s spool is gone');
  }

  /**
   * Removes every file left at once, synchronously: a file must not outlive its answer, not even
   * when the process stops right after the last byte (one unlink a file).
   */
  dispose(): void {
    this.disposed = true;
    const paths = [...this.paths];
    this.paths.clear();
    this.reservation.release();
    for (const p of paths) rmSync(p, { force: true });
  }
}

/**
 * One part's statement into the spool: DuckDB writes its groups to a Parquet file (COPY fails as
 * the statement would, and says how many it wrote), which is streamed back a chunk at a time into
 * a file of groups (aggregate-codec.ts) and removed. A materialized result would free its memory
 * only when the garbage collector happens to take its small handle; a streamed one frees it as it
 * ends. A read that ends short of the count (the client library ends a failed stream as if it had
 * finished) throws: never a part that lacks groups.
 */
export async function spoolPart(c: DuckDBConnection, statement: Compiled, spool: Spool, columns: readonly AggregateColumn[], read: ChunkVisitor): Promise<SpooledPart> {
  const parquet = spool.file('part.parquet');
  const file = quoteFilePath(parquet, spool.place.dir, 'TEMP_DIR');
  let size = 0;
  try {
    // Inside the try: a COPY interrupted after DuckDB created its file leaves none.
    // Every column has a Parquet type (a lane's total comes as two doubles): the groups come back as they were.
    const copied = await c.run(`COPY (${statement.sql}) TO ${file} (FORMAT parquet, COMPRESSION uncompressed)`, statement.params);
    spool.created(parquet);
    spool.grow((size = (await stat(parquet)).size));
    const result = await c.stream(`SELECT * FROM read_parquet(${file})`);
    const part = await spoolChunks(result.columnNames(), () => result.fetchChunk(), spool, columns, read).catch(async (e: unknown) => {
      // A read left mid-way keeps the file open (removed, its space still taken) until the connection's next statement,
      // which may be long on a quiet server: the client library cannot close a streamed result, a statement replaces it.
      await c.run('SELECT 1').catch(() => undefined);
      throw e;
    });
    if (part.rows !== copied.rowsChanged) throw new Error(`an aggregate part read back ${part.rows} of the ${copied.rowsChanged} groups written`);
    return part;
  } finally {
    await spool.remove(parquet, size);
  }
}

/** A result's groups, a chunk at a time until `next` gives none, into a file of the spool (aggregate-codec.ts). */
export async function spoolChunks(names: readonly string[], next: () => Promise<DuckDBDataChunk | null>, spool: Spool, columns: readonly AggregateColumn[], read: ChunkVisitor): Promise<SpooledPart> {
  const part: SpooledPart = { path: spool.file('part'), rows: 0, runs: [] };
  const out = await open(part.path, 'wx');
  try {
    spool.created(part.path);
    const reader = read(names);
    const writer = new RowWriter(columns);
    for (let chunk: DuckDBDataChunk | null; (chunk = await next()) && chunk.rowCount > 0; ) {
      spool.place.signal.throwIfAborted();
      // Each group written as it is read: none outlives its turn, so the garbage stays young.
      reader(chunk, (row) => {
        writer.write(row);
        addToRuns(part.runs, row.values[0] as Instant);
        part.rows++;
      });
      const bytes = writer.take();
      spool.grow(bytes.length);
      await writeAll(out, bytes);
    }
    return part;
  } finally {
    await out.close();
  }
}

/** Writes all of `bytes` (a write may take fewer, on a disk nearly full). */
async function writeAll(out: FileHandle, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length; ) at += (await out.write(bytes, at, bytes.length - at)).bytesWritten;
}

