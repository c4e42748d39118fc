import { createHash } from 'node:crypto';
import { PARQUET_MAGIC } from '../../shared/parquet/combine-footers.ts';
import { footerFields, type FooterFields } from '../../shared/parquet/footer-fields.ts';
import { COLUMNAR_META_KEY } from '../../shared/wire.ts';
import type { PageBody } from './csv-page.ts';
import { ProtocolError, TransferError } from '../errors.ts';

/**
 * The largest footer a page may have. A page holds at most ROW_LIMIT rows in row groups of tens of
 * thousands of rows: its footer is tens to hundreds of kilobytes. The bytes after the last
 * `MAX_FOOTER_BYTES + 8` are kept back from the hash until the page ends, so the footer is in hand.
 */
export const MAX_FOOTER_BYTES = 4 * 1024 * 1024;
const KEPT_BACK = MAX_FOOTER_BYTES + 8;

/**
 * Reads a Parquet page (one whole file) as it streams in, handing every byte on as served. The rows
 * hash is SHA-256 over the row-group bytes, between the leading `PAR1` and the footer: the footer
 * carries the page's meta (its data version), so rows rewritten identically by a compaction hash
 * the same. Bytes are hashed as soon as they are further than the largest footer from the end;
 * only that tail is held. The row count and `meta` come from the footer once the page ends, read
 * by a walker that skips everything else (a forged footer costs no more memory than its bytes).
 */
export class ParquetPageReader {
  private readonly hash = createHash('sha256');
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private seen = 0;

  constructor(private readonly onData: (bytes: Buffer) => void) {}

  /** Rows are known only from the footer, at the end of the page. */
  get rowCount(): number {
    return 0;
  }

  push(chunk: Buffer): void {
    this.onData(chunk);
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    if (this.tailBytes > 2 * KEPT_BACK) this.hashOut(this.tailBytes - KEPT_BACK);
  }

  /**
   * The footer is the last thing a served page holds, so a body without a readable one was cut: a
   * prefix of a Parquet file ends in row-group bytes. A footer that reads is the file's own word on
   * its rows, and what it lacks is the server's fault.
   */
  finish(): PageBody {
    const rest = Buffer.concat(this.tail);
    const size = this.seen + rest.length;
    if (this.seen === 0) this.checkStart(rest);
    const cut = (why: string) => new TransferError(`the response was cut off before the end of the Parquet file, after ${size} bytes: ${why}`);
    if (size < 12 || !rest.subarray(rest.length - 4).equals(PARQUET_MAGIC)) throw cut('it does not end with a footer');
    const length = rest.readUInt32LE(rest.length - 8);
    if (length > MAX_FOOTER_BYTES) throw cut(`its last bytes announce a footer of ${length} bytes, more than the ${MAX_FOOTER_BYTES} a page can need`);
    const bodyEnd = size - 8 - length;
    if (bodyEnd < 4) throw cut(`its last bytes announce a footer of ${length} bytes, longer than the file`);
    this.hashOut(bodyEnd - this.seen, rest);
    const footer = rest.subarray(rest.length - 8 - length, rest.length - 8);
    let fields: FooterFields;
    try {
      fields = footerFields(footer);
    } catch (e) {
      throw cut(`its footer cannot be read (${(e as Error).message})`);
    }
    const returned = fields.rows;
    if (returned === null || returned < 0) throw new ProtocolError('the Parquet footer has no row count');
    const text = fields.keyValues.get(COLUMNAR_META_KEY);
    if (text === undefined) throw new ProtocolError(`the Parquet response has no ${COLUMNAR_META_KEY} metadata`);
    return { returned, rowsSha256: this.hash.digest('hex'), csvHeader: null, meta: parseMeta(text) };
  }

  /** Hashes the next `n` bytes of the page (skipping the leading magic) and drops them from the tail. */
  private hashOut(n: number, joined = Buffer.concat(this.tail)): void {
    const start = this.seen;
    if (start === 0) this.checkStart(joined);
    const skip = Math.max(0, PARQUET_MAGIC.length - start);
    this.hash.update(joined.subarray(Math.min(skip, n), n));
    this.seen += n;
    this.tail = [joined.subarray(n)];
    this.tailBytes = joined.length - n;
  }

  /** A cut keeps the start of a page: one that does not open with the magic is no Parquet file at all. */
  private checkStart(first: Buffer): void {
    if (first.length >= 4 && !first.subarray(0, 4).equals(PARQUET_MAGIC)) throw new ProtocolError('the response is not a Parquet file');
  }
}

function parseMeta(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new ProtocolError(`the Parquet footer's ${COLUMNAR_META_KEY} is not JSON: ${(e as Error).message}`);
  }
}
