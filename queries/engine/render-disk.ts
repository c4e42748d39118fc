import { rm } from 'node:fs/promises';
import { renderedRows, type RenderedEntry, type RenderWindow } from './rendered-window.ts';

/**
 * The renderings kept on disk within RENDER_CACHE_MB, least recently used first, and what the
 * rendering under way has written so far: every byte a rendering writes counts (DuckDB's scratch
 * copy of a file's CSV lines included), and room is made before a rendering is written.
 */
export class RenderDisk {
  private readonly entries = new Map<string, RenderedEntry>();
  /** Disk held by the renderings kept. */
  private kept = 0;
  /** Disk the rendering under way has written so far (a scratch copy, then its text). */
  private writing = 0;

  constructor(readonly maxBytes: number) {}

  /** Disk held: the renderings kept and what the one under way has written. */
  get bytes(): number {
    return this.kept + this.writing;
  }

  get files(): number {
    return this.entries.size;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /**
   * The window's rows from the renderings `keys` (each file's, in order), or null when any has none,
   * or none the window's filters can use. A rendering whose file is gone is forgotten, so the next
   * window's miss renders it again.
   */
  async read(keys: readonly string[], window: RenderWindow): Promise<{ bytes: Buffer; returned: number } | null> {
    const found = keys.map((k) => this.entries.get(k));
    if (found.some((e) => !e || (window.filters.length > 0 && !e.index))) return null;
    const parts: Buffer[] = [];
    let returned = 0;
    for (const [i, entry] of (found as RenderedEntry[]).entries()) {
      // Most recently used last: eviction takes the first.
      this.entries.delete(keys[i]!);
      this.entries.set(keys[i]!, entry);
      const part = await renderedRows(entry, window);
      if (!part) return (this.drop(keys[i]!, entry), null);
      parts.push(part.bytes);
      returned += part.returned;
    }
    // One file (most windows): its range as read, not copied again.
    return { bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts), returned };
  }

  /**
   * Counts `bytes` as written by the rendering under way, least recently used renderings out to make
   * room; false, nothing evicted, when they pass the budget alone.
   */
  hold(bytes: number): boolean {
    this.writing = bytes;
    if (bytes > this.maxBytes) return false;
    this.evict();
    return true;
  }

  /** The rendering under way is over: nothing of it on disk any more, or kept by `add`. */
  release(): void {
    this.writing = 0;
  }

  /** The rendering under way, written (`bytes` held for it), kept. */
  add(key: string, entry: RenderedEntry, bytes: number): void {
    this.entries.set(key, entry);
    this.kept += bytes;
    this.writing = 0;
    this.evict();
  }

  private drop(key: string, entry: RenderedEntry): void {
    if (this.entries.get(key) !== entry) return;
    this.entries.delete(key);
    this.kept -= entry.offsets[entry.offsets.length - 1]!;
  }

  private evict(): void {
    for (const [k, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(k, old);
      void rm(old.file, { force: true }).catch(() => undefined);
    }
  }
}
