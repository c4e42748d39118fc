import { open, rm, stat } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { csvRows, type QuerySpec } from '../sql/compile.ts';
import { compileCopy, CSV_COPY } from '../sql/compile-copy.ts';
import { Growing } from './render-columns.ts';
import { keyedRows, type RenderedRows, type RenderOrder } from './render-file.ts';

/** Where a CSV rendering's scratch copy is written, and the disk budget it is counted in as it grows. */
export interface CsvScratch {
  /** The copy's path, under `dir` (the engine's TEMP_DIR: DuckDB writes nowhere else). */
  scratch: string;
  dir: string;
  /** Told the copy's size as DuckDB writes it; false (past the budget) stops the copy. */
  hold(bytes: number): boolean;
  /** Bytes of the copy read at a time while its lines are cut (default 1 MiB; a few bytes in tests, so that lines span pieces). */
  piece?: number;
}

/** How often the scratch copy's size is looked at while DuckDB writes it. */
const WATCH_MS = 10;

/**
 * The whole file's CSV lines and keys, as the response's COPY writes them (DuckDB's own CSV writer,
 * so formatting and quoting stay native), ordered by the order key. The key is written as the first
 * field of each line through a scratch copy, then cut off as the copy is read a piece at a time
 * (a BIGINT is never quoted), the lines written to `target`. Null: the copy, or the copy and the
 * lines written so far, grew past the budget (stopped there); the copy is removed either way.
 */
export async function writeCsv(c: DuckDBConnection, spec: QuerySpec, file: string, s: CsvScratch, target: string, order: RenderOrder): Promise<RenderedRows | null> {
  let [done, past] = [false, false];
  const look = async () => {
    const bytes = await stat(s.scratch).then((x) => x.size, () => 0);
    // Again at each look: an interrupt that reaches the statement while it is prepared is lost. Once
    // past, never held again (a hold may evict others for a copy already given up).
    if (done || (!past && s.hold(bytes))) return;
    past = true;
    c.interrupt();
  };
  const watch = setInterval(() => void look(), WATCH_MS);
  let rows: RenderedRows | null = null;
  try {
    const q = compileCopy(keyedRows(spec, file, csvRows, null, order), CSV_COPY, s.scratch, s.dir);
    await c.run(q.sql, q.params).finally(() => (done = true)).catch((e: unknown) => {
      if (!past) throw e;
    });
    clearInterval(watch);
    const copied = (await stat(s.scratch)).size;
    if (past || !s.hold(copied)) return null;
    // Both on disk while the lines are cut from the copy: each piece written counts with the copy.
    rows = await splitKeyedFile(s.scratch, target, (written) => s.hold(copied + written), s.piece ?? SPLIT_PIECE);
  } finally {
    clearInterval(watch);
    await rm(s.scratch, { force: true });
  }
  // The copy gone, only the lines count (a null rendering is removed by its caller).
  if (rows) s.hold(rows.bytes);
  return rows;
}

/** Bytes of the scratch copy read at a time. */
const SPLIT_PIECE = 1 << 20;

/** The copy's lines split into keys and lines without their key, written to `target` a piece at a time; null once `hold` refuses the bytes written. */
async function splitKeyedFile(copy: string, target: string, hold: (written: number) => boolean, piece: number): Promise<RenderedRows | null> {
  const input = await open(copy, 'r');
  // Closed whatever happens next: an open copy keeps its disk after it is removed.
  const out = await open(target, 'w').catch(async (e: unknown) => {
    await input.close();
    throw e;
  });
  try {
    const lines = new KeyedLines();
    let buffer: Buffer<ArrayBuffer> = Buffer.allocUnsafe(2 * piece);
    // Bytes of a line begun in the last piece, at the buffer's start.
    let held = 0;
    for (;;) {
      if (buffer.length - held < piece) buffer = grown(buffer, held);
      const { bytesRead } = await input.read(buffer, held, piece, null);
      if (bytesRead === 0) break;
      const { text, rest } = lines.split(buffer.subarray(0, held + bytesRead));
      if (!hold(lines.bytes)) return null;
      await out.writeFile(text);
      held = rest.copy(buffer, 0);
    }
    if (held > 0) throw new Error('a rendered CSV line without its end');
    return { keys: lines.keys.array, offsets: lines.offsets.array, bytes: lines.bytes };
  } finally {
    await Promise.all([input.close(), out.close()]);
  }
}

/** A buffer twice as large, its first `held` bytes kept. */
function grown(buffer: Buffer, held: number): Buffer<ArrayBuffer> {
  const larger = Buffer.allocUnsafe(2 * buffer.length);
  buffer.copy(larger, 0, 0, held);
  return larger;
}

/** Lines `key,fields…\n` split into keys and the lines without their key, piece by piece; a newline inside quotes is the field's. */
class KeyedLines {
  readonly keys = new Growing(BigInt64Array);
  readonly offsets = new Growing(Float64Array);
  /** Bytes of lines without their key so far. */
  bytes = 0;

  constructor() {
    this.offsets.push(0);
  }

  /** The whole lines of `data` without their keys (written over `data`'s own bytes), and the part line after them. */
  split(data: Buffer): { text: Buffer; rest: Buffer } {
    let at = 0;
    let start = 0;
    while (start < data.length) {
      const comma = data.indexOf(0x2c, start);
      if (comma < 0) break;
      let end = comma + 1;
      for (let quoted = false; end < data.length && (quoted || data[end] !== 0x0a); end++) if (data[end] === 0x22) quoted = !quoted;
      if (end >= data.length) break;
      this.keys.push(keyOf(data, start, comma));
      // Moved left over the keys already cut: the text never overtakes what is still to be read.
      at += data.copy(data, at, comma + 1, end + 1);
      this.offsets.push((this.bytes += end - comma));
      start = end + 1;
    }
    return { text: data.subarray(0, at), rest: data.subarray(start) };
  }
}

/** The integer in `data[start, end)`; a row without one (an empty first field) cannot be placed in a window. */
function keyOf(data: Buffer, start: number, end: number): bigint {
  const negative = data[start] === 0x2d; // '-'
  const digits = end - start - (negative ? 1 : 0);
  if (digits < 1 || digits > 19) throw new Error('a rendered CSV line without its key');
  let n = 0;
  for (let i = end - digits; i < end; i++) {
    const d = data[i]! - 0x30;
    if (d < 0 || d > 9) throw new Error('a rendered CSV line without its key');
    n = n * 10 + d;
  }
  // Exact as a double up to 15 digits (epoch microseconds until the year 2286); longer ones as text.
  const key = digits <= 15 ? BigInt(n) : BigInt(data.toString('latin1', end - digits, end));
  return negative ? -key : key;
}
