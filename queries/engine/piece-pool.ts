import type { Readable, Writable } from 'node:stream';

/** Buffers lent out and not yet seen written, tracked at most: past it the oldest is only forgotten (never used again). */
const MOST_LENT = 16;

/** How far a response has got with its body: bytes handed to it, and bytes of those written (at most: never more than were). */
export interface SendProgress {
  handed(): number;
  written(): number;
}

/**
 * The progress of a body handed to `stream` (`handed()` bytes so far), a stream of bytes piped
 * straight into `out` (no stream between): what is neither left in the stream nor waiting in `out`
 * has been written (a socket counts a write until the system has taken it; the response's head,
 * counted there too, only makes it look less).
 */
export function sendProgress(handed: () => number, stream: Readable, out: Writable): SendProgress {
  if (stream.readableObjectMode) throw new Error('a body\'s progress is counted in bytes: not an object stream');
  return { handed, written: () => handed() - stream.readableLength - out.writableLength };
}

/**
 * The buffers a large body is read into a piece at a time, used again once the response has
 * written them. A new buffer a piece (256 KiB) is memory outside V8's heap that V8 counts and
 * collects for: a month of GeoJSON sent from renderings made a full collection every 50 MB or so,
 * most of the main thread's time. Whether a piece has been written only the response can tell
 * (`sendsTo`). A piece is asked for only once the last one was handed over, so every buffer lent
 * before lies within the bytes handed by then, and is free once that many are written. Until told,
 * every piece is a new buffer, as when the body is compressed or written to a file first.
 */
export class PiecePool {
  private readonly free: Buffer[] = [];
  /** In the order lent; `end`: the bytes handed once it was (null until the next piece is asked for). */
  private readonly lent: { buffer: Buffer; end: number | null }[] = [];
  private progress: SendProgress | null = null;
  /** Pieces read into a buffer used before. */
  reused = 0;

  constructor(readonly pieceBytes: number) {}

  sendsTo(progress: SendProgress): void {
    this.progress = progress;
  }

  /** A buffer of `pieceBytes` for the next piece: one used before if written. */
  take(): Buffer {
    if (!this.progress) return Buffer.allocUnsafe(this.pieceBytes);
    const handed = this.progress.handed();
    const written = this.progress.written();
    for (const l of this.lent) l.end ??= handed;
    while (this.lent.length > 0 && this.lent[0]!.end! <= written) this.free.push(this.lent.shift()!.buffer);
    const used = this.free.pop();
    if (used) this.reused++;
    const buffer = used ?? Buffer.allocUnsafe(this.pieceBytes);
    if (this.lent.push({ buffer, end: null }) > MOST_LENT) this.lent.shift();
    return buffer;
  }
}
