import { createHash, randomBytes } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { isOutOfEngineMemory, isOutOfTempSpace, wasStopped } from '../errors.ts';
import { fileIdentity, type DataFile } from '../files/data-file.ts';
import { assertFilesUnchanged } from '../files/identity.ts';
import type { QuerySpec } from '../sql/compile.ts';
import type { Engine } from './engine.ts';
import { renderCsv, renderFeatures, type RenderedText } from './render-file.ts';
import { filterFields, filterIndex, readFilterIndex, type FilterIndex } from './render-filter.ts';
import { RenderDisk } from './render-disk.ts';
import { contended, idle, untilDoneOrAborted } from './render-timing.ts';
import type { RenderWindow } from './rendered-window.ts';

/** The text formats rendered: each file's rendering of one is its own entry. */
export type RenderedFormat = 'geojson' | 'csv';

/** A file to render, as listed and checked. */
interface Job {
  format: RenderedFormat;
  /** Seen by the background checks, not asked for: rendered only while no request waits for DuckDB. */
  seen: boolean;
  spec: QuerySpec;
  file: DataFile;
  hash: string;
  /** Resolved once the job leaves the queue, rendered or not. */
  done: Promise<void>;
  settle(): void;
}

/** Files waiting beyond this are not queued; they are asked for again by their next window. */
const MAX_QUEUED = 1000;
/** Files seen by the background checks queued at most: new data is rendered a little at a time. */
const MAX_SEEN_QUEUED = 16;
/** A window waits for its files' renderings only when they are expected done within this time. */
const MAX_WAIT_MS = 3000;
/** A rendering's expected time before any is measured (a day file of hotspots on a quiet core: 0.15–0.25 s). */
const FIRST_RENDER_MS = 250;
/** How often seen files waiting look again whether requests still wait for DuckDB. */
const YIELD_MS = 50;

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
  /** Files waiting to be rendered (and the one being rendered), in the order asked. */
  private readonly queued = new Map<string, Job>();
  private working = false;
  /** Set while seen files wait for the engine to be idle: when it is looked at again. */
  private retry: NodeJS.Timeout | undefined;
  /** Files that failed to render for a cause of their own or passed the budget alone: not tried again (a replaced file is another key). */
  private readonly refused = new Set<string>();
  /** How long a rendering takes lately (ms): how far down the queue a window waits for its file. */
  private renderMs = FIRST_RENDER_MS;
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

  /** Files waiting to be rendered, the one being rendered included. */
  get pending(): number {
    return this.queued.size;
  }

  private static key(format: RenderedFormat, f: DataFile, footerHash: string): string {
    return `${createHash('sha256').update(`${fileIdentity(f)}\0${footerHash}`).digest('hex').slice(0, 40)}.${format}`;
  }

  /** The window's rows in `format` from the renderings of all its files, in order, or null when any file has none. */
  async read(format: RenderedFormat, files: readonly DataFile[], footerHashes: ReadonlyMap<string, string>, window: RenderWindow): Promise<{ bytes: Buffer; returned: number } | null> {
    return this.counted(await this.find(format, files, footerHashes, window));
  }

  /**
   * As read, but while other requests use DuckDB, a window whose files not rendered are all
   * expected rendered soon waits for their renderings instead of asking DuckDB: a file's rendering
   * costs about what seven to ten of its 1-hour windows cost the old way, and the cores those
   * windows would take go to it. Null: answered the old way (DuckDB idle, a file not queued, or
   * too far down the queue).
   */
  async readSoon(engine: Engine, format: RenderedFormat, files: readonly DataFile[], footerHashes: ReadonlyMap<string, string>, window: RenderWindow, signal: AbortSignal): Promise<{ bytes: Buffer; returned: number } | null> {
    const found = await this.find(format, files, footerHashes, window);
    // DuckDB idle: the old way is as quick as the window has ever been answered.
    const jobs = found || !contended(engine) ? null : this.soon(format, files, footerHashes);
    if (!jobs) return this.counted(found);
    // Waited for: no longer only while the engine is idle.
    for (const j of jobs) j.seen = false;
    if (!this.working) void this.work(engine);
    // Bounded however the renderings fare (a stalled disk): past it, the window goes the old way.
    await untilDoneOrAborted(Promise.all(jobs.map((j) => j.done)), signal, 2 * MAX_WAIT_MS);
    return this.counted(signal.aborted ? null : await this.find(format, files, footerHashes, window));
  }

  /**
   * The queued jobs of the files not rendered, when the renderings up to the last of them are
   * expected done within MAX_WAIT_MS (at the pace of the last ones, however loaded the cores); else null.
   */
  private soon(format: RenderedFormat, files: readonly DataFile[], footerHashes: ReadonlyMap<string, string>): Job[] | null {
    const keys = files.map((f) => Renderings.key(format, f, footerHashes.get(f.path) ?? '')).filter((k) => !this.disk.has(k));
    const ahead = [...this.queued.keys()].slice(0, Math.max(1, Math.floor(MAX_WAIT_MS / this.renderMs)));
    return keys.length > 0 && keys.every((k) => ahead.includes(k)) ? keys.map((k) => this.queued.get(k)!) : null;
  }

  private counted<T>(read: T | null): T | null {
    if (read) this.hits++;
    else this.misses++;
    return read;
  }

  private async find(format: RenderedFormat, files: readonly DataFile[], footerHashes: ReadonlyMap<string, string>, window: RenderWindow): Promise<{ bytes: Buffer; returned: number } | null> {
    const read = await this.disk.read(files.map((f) => Renderings.key(format, f, footerHashes.get(f.path) ?? '')), window);
    // Each rendered Feature starts with its separating comma; the response's first has none.
    return read && { bytes: read.bytes.subarray(format === 'geojson' && read.bytes.length > 0 ? 1 : 0), returned: read.returned };
  }

  /**
   * Queues for rendering those of `files` not rendered yet; they are rendered one after another on
   * the engine's background connection, outside the pool. Never throws: a failure (a full disk, a
   * file replaced meanwhile) leaves the file to the old way.
   */
  renderLater(engine: Engine, format: RenderedFormat, spec: QuerySpec, files: readonly DataFile[], footerHashes: ReadonlyMap<string, string>, seen = false): void {
    for (const file of files) {
      const hash = footerHashes.get(file.path);
      const key = hash === undefined ? null : Renderings.key(format, file, hash);
      if (!key || this.disk.has(key) || this.queued.has(key) || this.refused.has(key) || this.queued.size >= (seen ? MAX_SEEN_QUEUED : MAX_QUEUED)) continue;
      let settle = () => undefined as void;
      const done = new Promise<void>((resolve) => (settle = resolve));
      this.queued.set(key, { format, seen, spec, file, hash: hash!, done, settle });
    }
    if (!this.working && this.queued.size > 0) void this.work(engine);
  }

  private async work(engine: Engine): Promise<void> {
    this.working = true;
    try {
      // Each job leaves the queue only once done: asked again meanwhile, it is not queued twice.
      for (let next = this.next(engine); next; next = this.next(engine)) {
        const started = performance.now();
        // The recent pace of renderings kept, a third for the last one: a rendering's time moves with
        // the load. One that failed or was refused early would make the next ones look sooner than they are.
        if (await this.render(engine, next[0], next[1])) this.renderMs += (performance.now() - started - this.renderMs) / 3;
        this.queued.delete(next[0]);
        next[1].settle();
      }
    } finally {
      this.working = false;
    }
    // Only seen files left, and requests wait for DuckDB: looked at again later, never waited on, so
    // a file asked for meanwhile starts the work at once instead of queueing behind them.
    if (this.queued.size > 0) this.retry ??= setTimeout(() => this.resume(engine), YIELD_MS).unref();
  }

  private resume(engine: Engine): void {
    this.retry = undefined;
    if (!this.working && this.queued.size > 0) void this.work(engine);
  }

  /** The first file asked for; a seen file only when none is left and the engine is idle (checked per job). */
  private next(engine: Engine): [string, Job] | undefined {
    let seen: [string, Job] | undefined;
    for (const entry of this.queued) {
      if (!entry[1].seen) return entry;
      seen ??= entry;
    }
    return seen && idle(engine) ? seen : undefined;
  }

  /** Whether the rendering was kept. */
  private async render(engine: Engine, key: string, job: Job): Promise<boolean> {
    // A name of its own: removing an evicted or lost rendering never removes a newer one of the same key.
    const file = path.join(this.dir, key.replace('.', `-${randomBytes(6).toString('hex')}.`));
    try {
      const spec = { ...job.spec, filters: [], params: {}, stationFiles: null };
      await mkdir(this.dir, { recursive: true });
      const c = await engine.backgroundConnection();
      const rendered = await this.renderFile(c, job.format, spec, job.file.path, `${file}.copy`);
      // Past the budget alone (its text, or the scratch copy it was cut from): never kept nor tried again.
      if (!rendered || !this.disk.hold(rendered.text.length)) return (this.refuse(key), false);
      const index = rendered.index !== undefined ? rendered.index : await readFilterIndex(c, spec, job.file.path);
      if (index && index.lat.length !== rendered.keys.length) throw new Error('the filter columns and the rendering disagree');
      // The rows belong to this key only if the file is still the one listed and checked.
      await assertFilesUnchanged(spec.descriptor.name, [job.file], new Map([[job.file.path, job.hash]]));
      await writeFile(file, rendered.text);
      this.disk.add(key, { file, keys: rendered.keys, offsets: rendered.offsets, index }, rendered.text.length);
      return true;
    } catch (e) {
      this.failures++;
      if (!transient(engine, e)) this.refuse(key);
      await rm(file, { force: true }).catch(() => undefined);
      return false;
    } finally {
      this.disk.release();
    }
  }

  /** The file's text in `format`, and for GeoJSON its filter index read in the same pass (undefined: read apart). */
  private async renderFile(c: DuckDBConnection, format: RenderedFormat, spec: QuerySpec, file: string, scratch: string): Promise<(RenderedText & { index?: FilterIndex | null }) | null> {
    if (format === 'csv') return renderCsv(c, spec, file, { scratch, dir: this.dir, hold: (bytes) => this.disk.hold(bytes) });
    const fields = filterFields(spec.descriptor);
    const rendered = await renderFeatures(c, spec, file, fields);
    return { ...rendered, index: fields ? filterIndex(spec.descriptor, rendered.columns) : null };
  }

  private refuse(key: string): void {
    this.refused.add(key);
    // Oldest first out: the set stays small however many files fail.
    if (this.refused.size > MAX_QUEUED) this.refused.delete(this.refused.values().next().value!);
  }
}

/**
 * A failure of the moment, not of the file: the disk (full, a directory not writable, any failed
 * system call), DuckDB's memory or interrupt, the engine closing. The file is tried again when next asked for.
 */
const transient = (engine: Engine, e: unknown): boolean =>
  engine.isClosed || isOutOfTempSpace(e) || isOutOfEngineMemory(e) || wasStopped(e) || typeof (e as NodeJS.ErrnoException | null)?.syscall === 'string';
