import { rm } from 'node:fs/promises';
import { RenderHandles } from './render-handles.ts';
import { locate, type ByteRange, type Reader, type RenderedEntry, type RenderWindow } from './rendered-window.ts';

/** A window's rows in renderings: each file's byte ranges, in order; the files kept on disk until `release`. */
export interface RenderedRanges {
  /** Each rendering's file, its size as written, and the window's ranges in it. */
  files: { file: string; size: number; ranges: ByteRange[] }[];
  returned: number;
  /** Bytes the ranges hold. */
  bytes: number;
  /** Bytes [start, end) of one of `files` (through a handle kept open), in `into` when it has room; throws when it cannot be read. */
  read(file: string, start: number, end: number, into?: Buffer): Promise<Buffer>;
  /** The window is read: its renderings may be removed again (idempotent). */
  release(): void;
  /** `file` could not be read: forgotten, so the next window's miss renders it again. */
  lost(file: string): void;
}

/**
 * The renderings kept on disk within RENDER_CACHE_MB, least recently used first, and what the
 * rendering under way has written so far: every byte a rendering writes counts (DuckDB's scratch
 * copy of a file's CSV lines included), and room is made before a rendering is written. A rendering
 * evicted while a window reads it leaves the index at once and the disk when its last reader is
 * done: the disk held may pass the budget by the renderings being read, shown until they leave.
 */
export class RenderDisk {
  private readonly entries = new Map<string, RenderedEntry>();
  /** Disk held by the renderings kept. */
  private kept = 0;
  /** Disk the rendering under way has written so far (a scratch copy, then its text). */
  private writing = 0;
  /** Readers of each rendering file being read. */
  private readonly readers = new Map<string, number>();
  /** Renderings evicted while read, by file: removed when their last reader is done. */
  private readonly doomed = new Map<string, number>();
  private doomedBytes = 0;
  private readonly handles = new RenderHandles(MOST_OPEN);

  constructor(readonly maxBytes: number) {}

  /** Disk held: the renderings kept, those evicted but still read, and what the one under way has written. */
  get bytes(): number {
    return this.kept + this.doomedBytes + this.writing;
  }

  get files(): number {
    return this.entries.size;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /**
   * Where the window's rows lie in the renderings `keys` (each file's, in order), or null when any
   * has none, none the window's filters can use, or one cannot be read (forgotten then). The
   * renderings stay on disk until released.
   */
  async ranges(keys: readonly string[], window: RenderWindow): Promise<RenderedRanges | null> {
    const found = keys.map((k) => this.entries.get(k));
    if (found.some((e) => !e || (window.filters.length > 0 && !e.columns))) return null;
    const entries = found as RenderedEntry[];
    for (const [i, entry] of entries.entries()) {
      // Most recently used last: eviction takes the first.
      this.entries.delete(keys[i]!);
      this.entries.set(keys[i]!, entry);
      this.readers.set(entry.file, (this.readers.get(entry.file) ?? 0) + 1);
    }
    let released = false;
    const release = () => {
      if (!released) for (const e of entries) this.unread(e.file);
      released = true;
    };
    const lost = (file: string) => {
      const i = entries.findIndex((e) => e.file === file);
      if (i >= 0 && this.entries.get(keys[i]!) === entries[i]) this.drop(keys[i]!, entries[i]!);
    };
    const read = (file: string, a: number, b: number, into?: Buffer) => this.handles.read(file, a, b, into);
    const located = await locateAll(entries, window, (e) => (a, b) => read(e.file, a, b), lost);
    if (!located) return (release(), null);
    const size = (rs: readonly ByteRange[]) => rs.reduce((n, [a, b]) => n + b - a, 0);
    const files = located.map((l, i) => ({ file: entries[i]!.file, size: entries[i]!.bytes, ranges: l.ranges }));
    return { files, returned: located.reduce((n, l) => n + l.returned, 0), bytes: located.reduce((n, l) => n + size(l.ranges), 0), read, release, lost };
  }

  /** The renderings' files closed once their reads are done (the process is stopping). */
  close(): void {
    this.handles.close();
  }

  /**
   * Counts `bytes` as written by the rendering under way, least recently used renderings out to make
   * room; false, nothing evicted, when they pass the budget alone, or (`evict` false) the room left.
   */
  hold(bytes: number, evict = true): boolean {
    this.writing = bytes;
    if (bytes > this.maxBytes || (!evict && this.kept + this.doomedBytes + bytes > this.maxBytes)) return false;
    this.evict();
    return true;
  }

  /** The rendering under way is over: nothing of it on disk any more, or kept by `add`. */
  release(): void {
    this.writing = 0;
  }

  /**
   * The rendering under way, written (its bytes held for it), kept: as the most recently used, or
   * (`coldest`: a file present at start, never asked for yet) as the least, so that such files,
   * rendered newest first, are evicted oldest first.
   */
  add(key: string, entry: RenderedEntry, coldest = false): void {
    if (coldest) {
      const rest = [...this.entries];
      this.entries.clear();
      this.entries.set(key, entry);
      for (const [k, e] of rest) this.entries.set(k, e);
    } else this.entries.set(key, entry);
    this.kept += entry.bytes;
    this.writing = 0;
    this.evict();
  }

  /** The rendering leaves the index; its file leaves the disk now, or when its last reader is done. */
  private drop(key: string, entry: RenderedEntry): void {
    this.entries.delete(key);
    const bytes = entry.bytes;
    this.kept -= bytes;
    if (!this.readers.has(entry.file)) return this.remove(entry.file);
    this.doomed.set(entry.file, bytes);
    this.doomedBytes += bytes;
  }

  private unread(file: string): void {
    const left = this.readers.get(file)! - 1;
    if (left > 0) return void this.readers.set(file, left);
    this.readers.delete(file);
    const bytes = this.doomed.get(file);
    if (bytes === undefined) return;
    this.doomed.delete(file);
    this.doomedBytes -= bytes;
    this.remove(file);
  }

  private remove(file: string): void {
    this.handles.forget(file);
    void rm(file, { force: true }).catch(() => undefined);
  }

  /** Renderings out, least recently used first, until those kept and the one under way fit (one evicted but still read leaves when its reader is done). */
  private evict(): void {
    for (const [k, old] of this.entries) {
      if (this.kept + this.writing <= this.maxBytes) break;
      this.drop(k, old);
    }
  }
}

/** Renderings' files held open at most (each an open file of the process). */
const MOST_OPEN = 64;

/** Files located at once: a window of a year has hundreds. */
const LOCATED_AT_ONCE = 16;

/** Each rendering's ranges for the window, or null when one cannot be read (told to `lost`). */
async function locateAll(entries: readonly RenderedEntry[], window: RenderWindow, reader: (e: RenderedEntry) => Reader, lost: (file: string) => void): Promise<{ ranges: ByteRange[]; returned: number }[] | null> {
  const out: { ranges: ByteRange[]; returned: number }[] = [];
  for (let i = 0; i < entries.length; i += LOCATED_AT_ONCE) {
    const batch = entries.slice(i, i + LOCATED_AT_ONCE);
    const located = await Promise.all(batch.map((e) => locate(reader(e), e, window).catch(() => (lost(e.file), null))));
    if (located.some((l) => l === null)) return null;
    out.push(...(located as { ranges: ByteRange[]; returned: number }[]));
  }
  return out;
}
