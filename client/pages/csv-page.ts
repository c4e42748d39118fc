import { createHash } from 'node:crypto';
import { counted, TransferError } from '../errors.ts';

const QUOTE = 0x22;
const LF = 0x0a;

export interface CsvSink {
  /** The header line, LF included, before any data. */
  header(text: string): void;
  /** Data records exactly as served, in order. */
  data(bytes: Buffer): void;
}

export interface PageBody {
  returned: number;
  rowsSha256: string;
  csvHeader: string | null;
  meta: Record<string, unknown> | null;
}

/**
 * Splits a CSV page into its header line and its data records as they stream in, counting
 * records and hashing their bytes. Records are counted by RFC 4180 quote state, not by line,
 * because a quoted field may hold a line break. Quote and LF bytes never occur inside a UTF-8
 * multi-byte sequence, so the scan works on raw bytes.
 */
export class CsvPageReader {
  private header: string | null = null;
  private headerParts: Buffer[] = [];
  private rows = 0;
  private inQuotes = false;
  private lastByte = LF;
  private readonly hash = createHash('sha256');

  constructor(private readonly sink: CsvSink) {}

  get rowCount(): number {
    return this.rows;
  }

  push(chunk: Buffer): void {
    const data = this.header === null ? this.takeHeader(chunk) : chunk;
    if (data === null || data.length === 0) return;
    this.countRecords(data);
    this.lastByte = data[data.length - 1]!;
    this.hash.update(data);
    this.sink.data(data);
  }

  /**
   * A served page ends with its header line and every record whole, so a body that ends inside one
   * was cut, whatever its framing said: a proxy can end a cut answer as if it were complete.
   */
  finish(): PageBody {
    if (this.header === null) throw new TransferError('the response was cut off inside the CSV header line');
    if (this.inQuotes || this.lastByte !== LF) throw new TransferError(`the response was cut off inside a CSV record, after ${counted(this.rows, 'complete row')}`);
    return { returned: this.rows, rowsSha256: this.hash.digest('hex'), csvHeader: this.header, meta: null };
  }

  private takeHeader(chunk: Buffer): Buffer | null {
    const end = chunk.indexOf(LF);
    if (end < 0) {
      this.headerParts.push(chunk);
      return null;
    }
    this.headerParts.push(chunk.subarray(0, end + 1));
    this.header = Buffer.concat(this.headerParts).toString('utf8');
    this.headerParts = [];
    this.sink.header(this.header);
    return chunk.subarray(end + 1);
  }

  private countRecords(data: Buffer): void {
    let quoted = this.inQuotes;
    let i = 0;
    let nextQuote = data.indexOf(QUOTE);
    while (i < data.length) {
      if (quoted) {
        if (nextQuote < 0) break;
        quoted = false;
        i = nextQuote + 1;
        nextQuote = data.indexOf(QUOTE, i);
        continue;
      }
      const lf = data.indexOf(LF, i);
      if (nextQuote >= 0 && (lf < 0 || nextQuote < lf)) {
        quoted = true;
        i = nextQuote + 1;
        nextQuote = data.indexOf(QUOTE, i);
        continue;
      }
      if (lf < 0) break;
      this.rows++;
      i = lf + 1;
    }
    this.inQuotes = quoted;
  }
}
