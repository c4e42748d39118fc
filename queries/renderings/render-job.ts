import { randomBytes } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { DatasetUnavailableError, isOutOfEngineMemory, isOutOfTempSpace, wasStopped } from '../errors.ts';
import type { DataFile } from '../files/data-file.ts';
import { sameFooter } from '../files/footer.ts';
import { compileCount, type QuerySpec } from '../sql/compile.ts';
import type { Engine } from '../engine/engine.ts';
import type { RenderDisk } from './render-disk.ts';
import { writeCsv } from './render-csv.ts';
import { writeFeatures, type RenderedRows } from './render-file.ts';
import { readFilterIndex, type FilterIndex } from './render-filter.ts';
import { recordsSize, writeRecords } from './render-records.ts';

/** The text formats rendered: each file's rendering of one is its own entry. */
export type RenderedFormat = 'geojson' | 'csv';

/**
 * How soon a queued file is rendered: 'asked' (a window waits), 'seen' (found by the background
 * checks after start-up), 'quiet' (a large window's), 'stock' (present at start: rendered last, and
 * only into room the budget has left).
 */
export type RenderPriority = 'asked' | 'quiet' | 'seen' | 'stock';

/** A file to render, as listed and checked. */
export interface Job {
  format: RenderedFormat;
  /** How soon it is rendered (raised to 'asked' when a window waits for it), and for 'stock' that it only fills room left. */
  priority: RenderPriority;
  spec: QuerySpec;
  file: DataFile;
  hash: string;
  /** Resolved once the job leaves the queue, rendered or not. */
  done: Promise<void>;
  settle(): void;
}

/**
 * How a rendering ended: kept; refused (past the budget alone, not a failure); full (a file present
 * at start past the room left, which it never makes by evicting: not a failure, the file is rendered
 * when asked for); broken (failed for a cause of the file's own, not tried again); failed (a cause of
 * the moment, tried again when next asked for); closed (the engine closed under it).
 */
export type Outcome = 'kept' | 'refused' | 'full' | 'broken' | 'failed' | 'closed';

/** Where renderings are written and the disk budget they are kept in. */
export interface RenderPlace {
  dir: string;
  disk: RenderDisk;
}

/** Renders one job's file on the engine's background connection and keeps it in `place` when it fits. */
export async function renderJob(engine: Engine, place: RenderPlace, key: string, job: Job): Promise<Outcome> {
  // A name of its own: removing an evicted or lost rendering never removes a newer one of the same key.
  const file = path.join(place.dir, key.replace('.', `-${randomBytes(6).toString('hex')}.`));
  let kept = false;
  // A file present at start fills room left (its priority read at each look: a window may wait for it meanwhile).
  let full = false;
  const hold = (bytes: number) => {
    const evicts = job.priority !== 'stock';
    if (place.disk.hold(bytes, evicts)) return true;
    full = !evicts && bytes <= place.disk.maxBytes;
    return false;
  };
  try {
    const spec = { ...job.spec, filters: [], params: {}, stationFiles: null };
    await mkdir(place.dir, { recursive: true });
    const c = await engine.backgroundConnection();
    const rendered = await renderFile(c, hold, job.format, spec, job.file.path, file);
    // Past the budget alone (its text, or the scratch copy it was cut from): never kept nor tried again.
    if (!rendered) return full ? 'full' : 'refused';
    await assertWhole(c, spec, job.file.path, rendered.keys.length);
    // Read as stored: a file not in order key after all is never kept (its windows would be wrong).
    if (!ascending(rendered.keys)) throw new Error('a rendered file not stored in order key');
    const index = rendered.index !== undefined ? rendered.index : await readFilterIndex(c, spec, job.file.path, 'stored');
    if (index && index.lat.length !== rendered.keys.length) throw new Error('the filter columns and the rendering disagree');
    // The records after the text: past the budget with them, the rendering passes it alone.
    if (!hold(rendered.bytes + recordsSize(rendered.keys.length, index))) return full ? 'full' : 'refused';
    const entry = await writeRecords(file, rendered.bytes, { keys: rendered.keys, offsets: rendered.offsets, index });
    // The rows belong to this key only if the file is still the one listed and checked: its status,
    // and its footer read again (a rewrite within one tick of the clock keeps the status; a window
    // answered from this rendering does not look at the file again).
    if (!(await sameFooter(job.file, job.hash))) throw new DatasetUnavailableError(spec.descriptor.name, 'a data file changed while it was rendered');
    // Nothing kept once the engine has closed: the process is stopping and nobody reads it.
    if (engine.isClosed) return 'closed';
    place.disk.add(key, entry, job.priority === 'stock');
    kept = true;
    return 'kept';
  } catch (e) {
    return engine.isClosed ? 'closed' : transient(e) ? 'failed' : 'broken';
  } finally {
    if (!kept) await rm(file, { force: true }).catch(() => undefined);
    place.disk.release();
  }
}

/**
 * The file's text in `format` written to `target` within the disk budget (null: `hold` refused it), and
 * for GeoJSON its filter index read in the same pass (undefined: read apart). Only files stored in
 * order key are rendered: read as stored, with no sort holding a day's text at once.
 */
async function renderFile(c: DuckDBConnection, hold: (bytes: number) => boolean, format: RenderedFormat, spec: QuerySpec, file: string, target: string): Promise<(RenderedRows & { index?: FilterIndex | null }) | null> {
  if (format === 'csv') return writeCsv(c, spec, file, { scratch: `${target}.copy`, dir: path.dirname(target), hold }, target, 'stored');
  return writeFeatures(c, spec, file, target, hold, 'stored');
}

/** Whether keys never decrease. */
function ascending(keys: BigInt64Array): boolean {
  for (let i = 1; i < keys.length; i++) if (keys[i]! < keys[i - 1]!) return false;
  return true;
}

/** A rendering that has not every row of its file: a cut of the moment (the engine interrupted or short of memory). */
class CutShort extends Error {}

/** The client ends a failed stream as if it had finished: a rendering is kept only with every row of its file. */
async function assertWhole(c: DuckDBConnection, spec: QuerySpec, file: string, rows: number): Promise<void> {
  const q = compileCount(spec, [file], null, null);
  const [[n]] = (await c.runAndReadAll(q.sql, q.params)).getRows() as [[bigint]];
  if (Number(n) !== rows) throw new CutShort('a rendering without every row of its file');
}

/**
 * A failure of the moment, not of the file: a rendering cut short, the disk (full, a directory not writable, any failed
 * system call), DuckDB's memory or interrupt. The file is tried again when next asked for.
 */
const transient = (e: unknown): boolean => e instanceof CutShort || isOutOfTempSpace(e) || isOutOfEngineMemory(e) || wasStopped(e) || typeof (e as NodeJS.ErrnoException | null)?.syscall === 'string';
