import { createHash } from 'node:crypto';
import type { PageBody } from './csv-page.ts';
import { counted, ProtocolError, TransferError } from '../errors.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

interface Capture {
  kind: 'key' | 'meta' | 'feature';
  parts: Buffer[];
  start: number;
  /** Depth outside the captured value: it is complete when the scan returns to it. */
  depth: number;
}

/**
 * Reads a FeatureCollection page as it streams in, one feature at a time: the page is never
 * held in memory. A byte-level scan tracks nesting and strings, captures the top-level `meta`
 * member and each element of `features`, and hands every feature on exactly as served. The rows
 * hash is SHA-256 over those feature texts joined by LF.
 */
export class GeoJsonPageReader {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private expectKey = false;
  private key = '';
  private inFeatures = false;
  private ended = false;
  private capture: Capture | null = null;
  private meta: Record<string, unknown> | null = null;
  private rows = 0;
  private readonly hash = createHash('sha256');

  constructor(private readonly onFeature: (feature: Buffer) => void) {}

  get rowCount(): number {
    return this.rows;
  }

  push(chunk: Buffer): void {
    for (let i = 0; i < chunk.length; i++) {
      if (this.inString) i = this.skipString(chunk, i);
      else this.structural(chunk, i);
    }
    if (this.capture) {
      this.capture.parts.push(chunk.subarray(this.capture.start));
      this.capture.start = 0;
    }
  }

  /** A document left open was cut (a prefix of a served page never fails the scan before its end). */
  finish(): PageBody {
    if (!this.ended) throw new TransferError(`the response was cut off before the end of the GeoJSON document, after ${counted(this.rows, 'complete feature')}`);
    if (!this.meta) throw new ProtocolError('the GeoJSON response has no meta block');
    return { returned: this.rows, rowsSha256: this.hash.digest('hex'), csvHeader: null, meta: this.meta };
  }

  /** Returns the index of the closing quote, or the last index of the chunk while still inside. */
  private skipString(chunk: Buffer, from: number): number {
    for (let i = from; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (this.escaped) this.escaped = false;
      else if (b === BACKSLASH) this.escaped = true;
      else if (b === QUOTE) {
        this.inString = false;
        if (this.capture?.kind === 'key') this.key = JSON.parse(this.take(chunk, i).toString('utf8')) as string;
        return i;
      }
    }
    return chunk.length;
  }

  private structural(chunk: Buffer, i: number): void {
    const b = chunk[i]!;
    if (b === QUOTE) {
      this.inString = true;
      if (this.depth === 1 && this.expectKey) this.begin('key', i);
      this.expectKey = false;
    } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) this.open(b, i);
    else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) this.close(chunk, i);
    else if (b === COMMA) this.expectKey = this.depth === 1;
    else if (!isSpace(b) && (this.depth === 0 || (this.inFeatures && this.depth === 2))) {
      throw new ProtocolError(this.depth === 0 ? 'the response is not one JSON object' : 'a feature is not a JSON object');
    }
  }

  private open(b: number, i: number): void {
    if (this.depth === 0 && (this.ended || b !== OPEN_OBJECT)) throw new ProtocolError('the response is not one JSON object');
    if (this.depth === 1 && this.key === 'meta' && b === OPEN_OBJECT) this.begin('meta', i);
    if (this.depth === 2 && this.inFeatures) this.begin('feature', i);
    if (this.depth === 1 && this.key === 'features' && b === OPEN_ARRAY) this.inFeatures = true;
    this.depth++;
    this.expectKey = this.depth === 1;
  }

  private close(chunk: Buffer, i: number): void {
    this.depth--;
    if (this.depth < 0) throw new ProtocolError('the response is not one JSON object');
    if (this.capture && this.depth === this.capture.depth) this.emit(this.capture.kind, this.take(chunk, i));
    if (this.depth === 1) this.inFeatures = false;
    if (this.depth === 0) this.ended = true;
  }

  private begin(kind: Capture['kind'], start: number): void {
    this.capture = { kind, parts: [], start, depth: this.depth };
  }

  /** Ends the capture at `end` (inclusive) and returns its bytes. */
  private take(chunk: Buffer, end: number): Buffer {
    const c = this.capture!;
    c.parts.push(chunk.subarray(c.start, end + 1));
    this.capture = null;
    return c.parts.length === 1 ? c.parts[0]! : Buffer.concat(c.parts);
  }

  private emit(kind: Capture['kind'], text: Buffer): void {
    if (kind === 'meta') {
      this.meta = JSON.parse(text.toString('utf8')) as Record<string, unknown>;
      return;
    }
    if (this.rows > 0) this.hash.update('\n');
    this.hash.update(text);
    this.rows++;
    this.onFeature(text);
  }
}
