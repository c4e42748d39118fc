import { createHash } from 'node:crypto';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { fileIdentity, type DataFile } from '../files/data-file.ts';
import type { QuerySpec } from '../sql/compile.ts';
import type { Engine } from './engine.ts';
import { RenderDisk } from './render-disk.ts';
import { renderJob, type Job, type RenderedFormat } from './render-job.ts';
import { MAX_QUEUED, MAX_WAIT_MS, RenderQueue } from './render-queue.ts';
import { contended, untilDoneOrAborted } from './render-timing.ts';
import type { RenderWindow } from './rendered-window.ts';

export type { RenderedFormat } from './render-job.ts';

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
    if (found || !contended(engine)) return this.counted(found);
    const jobs = this.queue.soon(engine, Renderings.keys(format, files, footerHashes).filter((k) => !this.disk.has(k)));
    if (!jobs) return this.counted(null);
    // Bounded however the renderings fare (a stalled disk): past it, the window goes the old way.
    this.waits++;
    await untilDoneOrAborted(Promise.all(jobs.map((j) => j.done)), signal, 2 * MAX_WAIT_MS).finally(() => this.waits--);
    return this.counted(signal.aborted ? null : await this.find(format, files, footerHashes, window));
  }

  private counted<T>(read: T | null): T | null {
    if (read) this.hits++;
    else this.misses++;
    return read;
  }

  private async find(format: RenderedFormat, files: readonly DataFile[], footerHashes: ReadonlyMap<string, string>, window: RenderWindow): Promise<{ bytes: Buffer; returned: number } | null> {
    const read = await this.disk.read(Renderings.keys(format, files, footerHashes), window);
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
      if (key && !this.disk.has(key) && !this.queue.has(key) && !this.refused.has(key)) this.queue.add(key, { format, seen, spec, file, hash: hash! });
    }
    this.queue.start(engine);
  }

  /** Queues nothing more, and lets every window waiting for a rendering go at once (before the engine closes). */
  close(): void {
    this.queue.close();
  }

  /** Renders a queued file; whether it was kept. */
  private async render(engine: Engine, key: string, job: Job): Promise<boolean> {
    const outcome = await renderJob(engine, { dir: this.dir, disk: this.disk }, key, job);
    // Stopped by the engine's close: not a failure of the rendering.
    if (outcome === 'broken' || outcome === 'failed') this.failures++;
    if (outcome === 'broken' || outcome === 'refused') this.refuse(key);
    return outcome === 'kept';
  }

  private refuse(key: string): void {
    this.refused.add(key);
    // Oldest first out: the set stays small however many files fail.
    if (this.refused.size > MAX_QUEUED) this.refused.delete(this.refused.values().next().value!);
  }
}
