import { open, type FileHandle } from 'node:fs/promises';

interface Held {
  handle: Promise<FileHandle>;
  /** Reads under way through it: it is closed only once none is. */
  users: number;
  /** Closed once unused, however recently used: its rendering left the disk. */
  closing: boolean;
}

/**
 * Renderings' files kept open between windows, the least recently used closed past `most` (once no
 * read uses it): a window of one rendered file then costs its reads alone, not an open and a close
 * as well. A file leaving the disk is closed once its reads are done, so its space is given back.
 */
export class RenderHandles {
  private readonly held = new Map<string, Held>();
  /** close() was called: a file a read opens after it is closed once that read is done, not kept. */
  private closed = false;

  constructor(private readonly most: number) {}

  get size(): number {
    return this.held.size;
  }

  /** Bytes [start, end) of `file`, in `into` when it has room (a new buffer otherwise); throws when it cannot be opened or is shorter. */
  async read(file: string, start: number, end: number, into?: Buffer): Promise<Buffer> {
    const held = this.take(file);
    try {
      const out = into && into.length >= end - start ? into.subarray(0, end - start) : Buffer.allocUnsafe(end - start);
      const handle = await held.handle;
      // A read may return less than asked before the end (a network file system): read on until the end of the file.
      for (let at = 0; at < out.length; ) {
        const { bytesRead } = await handle.read(out, at, out.length - at, start + at);
        if (bytesRead === 0) throw new Error('a rendering shorter than its offsets');
        at += bytesRead;
      }
      return out;
    } catch (e) {
      held.closing = true;
      throw e;
    } finally {
      held.users--;
      this.trim();
    }
  }

  /** `file` left the disk: its handle closed once unused. */
  forget(file: string): void {
    const held = this.held.get(file);
    if (!held) return;
    held.closing = true;
    this.trim();
  }

  /** Every file closed once its reads are done, and any a later read opens (a response still sent) once that read is. */
  close(): void {
    this.closed = true;
    for (const held of this.held.values()) held.closing = true;
    this.trim();
  }

  /** The file's handle, opened if need be, now the most recently used. */
  private take(file: string): Held {
    const held = this.held.get(file) ?? { handle: open(file, 'r'), users: 0, closing: this.closed };
    this.held.delete(file);
    this.held.set(file, held);
    held.users++;
    return held;
  }

  /** Unused handles closed: those of files that left, then the least recently used past `most`. */
  private trim(): void {
    let over = this.held.size - this.most;
    for (const [file, held] of this.held) {
      if (held.users > 0 || !(held.closing || over > 0)) continue;
      this.held.delete(file);
      over--;
      void held.handle.then((h) => h.close()).catch(() => undefined);
    }
  }
}
