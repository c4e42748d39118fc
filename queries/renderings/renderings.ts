import { createHash } from 'node:crypto';
import { rm, stat } from 'node:fs/promises';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { fileIdentity, type DataFile } from '../files/data-file.ts';
import type { QuerySpec } from '../sql/compile.ts';
import type { Engine } from '../engine/engine.ts';
import type { PiecePool } from '../engine/piece-pool.ts';
import { RenderDisk, type RenderedRanges } from './render-disk.ts';
import { renderJob, type Job, type RenderedFormat } from './render-job.ts';
import { MAX_QUEUED, MAX_WAIT_MS, RenderQueue, type RenderPriority } from './render-queue.ts';
import { untilDoneOrAborted } from './render-timing.ts';
import { gathered, rangePieces, type RenderWindow } from './rendered-window.ts';

export type { RenderedFormat } from './render-job.ts';

export type { RenderPriority } from './render-queue.ts';

/*
 * Renderings: a file's rows rendered once as GeoJSON Features or CSV lines, kept on disk within
 * RENDER_CACHE_MB, and served by byte range to any window of that file.
 *
 * Glossary:
 * - rendering: one file's text in one format, followed by its records (render-records.ts).
 * - record: a fixed-size entry a row: order key, offset of its text, and the filter index's
 *   columns (position, coded text filters) when filters are indexed (render-filter.ts).
 * - sparse keys: every STRIDE-th key kept in memory, which finds a window's bounds on disk.
 * - job and queue: a rendering being made, and those waiting, by priority (asked, seen, quiet,
 *   stock: render-queue.ts); the policy of which windows and files are rendered is rendered.ts.
 * - disk: the renderings on disk and their budget (render-disk.ts), handles kept open for reads.
 */

/** A window's rows in renderings, and the bytes before its first row that are not sent (the first Feature's comma). */
export type RenderedRead = RenderedRanges & { skip: number };

/** The most bytes of a rendering read at once for a window sent a piece at a time, and for one read whole. */
export const PIECE_BYTES = 256 * 1024;
const WHOLE_PIECE_BYTES = 1024 * 1024;

/**
 * The window's bytes, a span of at most `piece` bytes at a time, read into `pool`'s buffers if
 * given (of `piece` bytes: each piece is then only valid until the pool lends its buffer again).
 * Throws when a rendering cannot be read (forgotten then) or holds fewer bytes than promised.
 */
export async function* renderedPieces(read: RenderedRead, piece: number, pool?: PiecePool): AsyncGenerator<Buffer> {
  let [skip, sent] = [read.skip, 0];
  for (const f of read.files) {
    try {
      for await (const part of rangePieces((a, b) => read.read(f.file, a, b, pool?.take()), f.ranges, piece)) {
        const out = part.subarray(Math.min(skip, part.length));
        skip -= part.length - out.length;
        sent += out.length;
        if (out.length > 0) yield out;
      }
    } catch (e) {
      read.lost(f.file);
      throw e;
    }
  }
  if (sent !== read.bytes - read.skip) throw new Error('a rendered window shorter than its offsets');
}

/**
 * Whether every rendering of the window is on disk as written (one removed or cut short by someone
 * else is forgotten): asked before the first byte of a window sent a piece at a time, so that only
 * a change while it is sent can cut it.
 */
async function onDisk(read: RenderedRead): Promise<boolean> {
  const found = await Promise.all(read.files.map((f) => stat(f.file).then((s) => s.size === f.size, () => false).then((whole) => whole || (read.lost(f.file), false))));
  return found.every(Boolean);
}

/** The window's bytes read whole and its renderings released; null when one could not be read. */
export async function readWhole(read: RenderedRead | null): Promise<{ bytes: Buffer; returned: number } | null> {
  if (!read) return null;
  // A file's one range (a window without filters, the bulk of requests) in one read, which is then
  // the answer itself, never copied; a filter's kept rows in pieces, so that a sparse one's are not
  // read with everything between them.
  const piece = read.files.every((f) => f.ranges.length <= 1) ? Math.max(WHOLE_PIECE_BYTES, read.bytes) : WHOLE_PIECE_BYTES;
  const bytes = await gathered(renderedPieces(read, piece)).catch(() => null).finally(() => read.release());
  return bytes && { bytes, returned: read.returned };
}

/**
 * Whether a dataset's Features depend on nothing but the file: point geometry from the file's own
 * columns and no wire column computed from a request parameter or another file. Only those are
 * rendered (a rendering is keyed by the file alone).
 */
export const renderable = (d: DatasetDescriptor): boolean => d.geometry.kind === 'point' && d.time !== null && d.columns.every((c) => !c.computed);

/**
 * GeoJSON Features and CSV lines of whole files, rendered once and served by byte range (RENDER_CACHE_MB).
 * Keyed by the file's identity (path, size, modification time, inode) and its checked footer hash:
 * a replaced file is another key and can never be answered from an old rendering. Disk is budgeted,
 * least recently used out first; a file not rendered (yet, or any more) is answered the old way,
 * and rendered in the background, on a connection of its own.
 */
export class Renderings {
  private readonly disk: RenderDisk;
  private readonly queue = new RenderQueue((engine, key, job) => this.render(engine, key, job));
  /** Files that failed to render for a cause of their own or passed the budget alone: not tried again (a replaced file is another key). */
  private readonly refused = new Set<string>();
  private waits = 0;
  /** A file present at start found no room: no more such files are queued. */
  private stockFull = false;
  hits = 0;
  misses = 0;
  failures = 0;

  constructor(
    readonly dir: string,
    readonly maxBytes: number,
  ) {
    this.disk = new RenderDisk(maxBytes);
  }

  /** Disk held: the renderings kept and what the one under way has written. */
  get size(): number {
    return this.disk.bytes;
  }

  get files(): number {
    return this.disk.files;
  }

  /** Windows waiting for their files' renderings. */
  get waiting(): number {
    return this.waits;
  }

  /** Files waiting to be rendered, the one being rendered included. */
  get pending(): number {
    return this.queue.size;
  }

  private static key(format: RenderedFormat, f: DataFile, footerHash: string): string {
    return `${createHash('sha256').update(`${fileIdentity(f)}\0${footerHash}`).digest('hex').slice(0, 40)}.${format}`;
  }

  private static keys(format: RenderedFormat, files: readonly DataFile[], footerHashes: ReadonlyMap<string, string>): string[] {
    return files.map((f) => Renderings.key(format, f, footerHashes.get(f.path) ?? ''));
  }

  /** The window's rows in `format` from the renderings of all its files, in order, read whole, or null when any file has none. */
  async read(format: RenderedFormat, files: readonly DataFile[], footerHashes: ReadonlyMap<string, string>, window: RenderWindow): Promise<{ bytes: Buffer; returned: number } | null> {
    return this.counted(await readWhole(await this.find(format, files, footerHashes, window)));
  }

  /**
   * Where the window's rows lie in its files' renderings (kept on disk until released), or null when
   * any file has none. While no connection is idle, a window of one file not rendered, whose
   * rendering is under way or next and expected done sooner than the old way would answer it (the
   * requests queued ahead of it and its own turn, at the recent length of a turn), waits for the
   * rendering instead of asking DuckDB: a file's rendering costs about what seven to ten of its
   * 1-hour windows cost the old way, and the cores those windows would take go to it (`waits`
   * false: not a window that waits). Null: answered the old way (a connection idle, a file not
   * queued or further down the queue, or its rendering not expected sooner). One of more than
   * `checkAbove` bytes only when its renderings are on disk as written.
   */
  async rangesSoon(engine: Engine, format: RenderedFormat, files: readonly DataFile[], footerHashes: ReadonlyMap<string, string>, window: RenderWindow, signal: AbortSignal, how: { checkAbove?: number; waits?: boolean } = {}): Promise<RenderedRead | null> {
    const found = await this.find(format, files, footerHashes, window, how.checkAbove);
    // A connection idle: the old way is as quick as the window has ever been answered; no turn timed yet: nothing says it is slow.
    const oldWayMs = found || how.waits === false ? 0 : (engine.answerMs() ?? 0);
    if (oldWayMs <= 0) return this.counted(found);
    const jobs = this.queue.soon(engine, Renderings.keys(format, files, footerHashes).filter((k) => !this.disk.has(k)), oldWayMs);
    if (!jobs) return this.counted(null);
    // Bounded however the renderings fare (a stalled disk): past it, the window goes the old way.
    this.waits++;
    await untilDoneOrAborted(Promise.all(jobs.map((j) => j.done)), signal, MAX_WAIT_MS).finally(() => this.waits--);
    return this.counted(signal.aborted ? null : await this.find(format, files, footerHashes, window, how.checkAbove));
  }

  private counted<T>(read: T | null): T | null {
    if (read) this.hits++;
    else this.misses++;
    return read;
  }

  /** The window's ranges; one of more than `checkAbove` bytes (sent a piece at a time) only when its renderings are on disk as written. */
  private async find(format: RenderedFormat, files: readonly DataFile[], footerHashes: ReadonlyMap<string, string>, window: RenderWindow, checkAbove = Infinity): Promise<RenderedRead | null> {
    const ranges = await this.disk.ranges(Renderings.keys(format, files, footerHashes), window);
    // Each rendered Feature starts with its separating comma; the response's first has none.
    const read = ranges && { ...ranges, skip: format === 'geojson' && ranges.bytes > 0 ? 1 : 0 };
    if (!read || read.bytes - read.skip <= checkAbove || (await onDisk(read))) return read;
    read.release();
    return null;
  }

  /**
   * Queues for rendering those of `files` not rendered yet; they are rendered one after another on
   * the engine's background connection, outside the pool. 'asked': a window waits, rendered in turn
   * whatever DuckDB does; 'quiet': a large window's files, rendered only while no request uses
   * DuckDB; 'seen': a file the background checks found (a few at a time), rendered only while no
   * request waits for DuckDB; 'stock': a file present at start, rendered after all others, only while
   * no request uses DuckDB, and only into room the budget has left (the first that finds none ends
   * them). Never throws: a failure (a full disk, a file replaced meanwhile) leaves the file to the old way.
   */
  renderLater(engine: Engine, format: RenderedFormat, spec: QuerySpec, files: readonly DataFile[], footerHashes: ReadonlyMap<string, string>, priority: RenderPriority = 'asked'): void {
    if (priority === 'stock' && this.stockFull) return;
    for (const file of files) {
      const hash = footerHashes.get(file.path);
      const key = hash === undefined ? null : Renderings.key(format, file, hash);
      if (key && !this.disk.has(key) && !this.refused.has(key)) this.queue.add(key, { format, spec, file, hash: hash! }, priority);
    }
    this.queue.start(engine);
  }

  /** Queues nothing more, lets every window waiting for a rendering go at once (before the engine closes), and closes the renderings' files once their reads are done. */
  close(): void {
    this.queue.close();
    this.disk.close();
  }

  /** The renderings' folder removed (the process is stopping, its engine closed): nothing indexes them any more. Files still being read stay readable until closed. */
  async remove(): Promise<void> {
    // A job stopped by the engine's close may still be removing its scratch file: a folder emptied
    // while it is read is tried again (ENOTEMPTY), as the temp folder is at shutdown (serve.ts).
    await rm(this.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  }

  /** Renders a queued file; whether it was kept. */
  private async render(engine: Engine, key: string, job: Job): Promise<boolean> {
    const outcome = await renderJob(engine, { dir: this.dir, disk: this.disk }, key, job);
    // Stopped by the engine's close: not a failure of the rendering.
    if (outcome === 'broken' || outcome === 'failed') this.failures++;
    if (outcome === 'broken' || outcome === 'refused') this.refuse(key);
    // The budget full: the other files present at start are left to be rendered when asked for.
    if (outcome === 'full') {
      this.stockFull = true;
      this.queue.dropStock();
    }
    return outcome === 'kept';
  }

  private refuse(key: string): void {
    this.refused.add(key);
    // Oldest first out: the set stays small however many files fail.
    if (this.refused.size > MAX_QUEUED) this.refused.delete(this.refused.values().next().value!);
  }
}
