import { cellPolygon, type AggregateColumn, type AggregateGeometry, type AggregateRow } from './aggregate-rows.ts';

/**
 * Groups as bytes for a temp file, and back, exactly: each row is its length (u32), then its
 * values in column order (a bucket as a 64-bit integer, text as its length and UTF-8 bytes, a
 * number as a double), then its geometry (a tag, then a point's two or a cell's four edges).
 * A number is never NaN in a group (a stat without a finite value is null), so NaN spells null;
 * text spells null by the length NULL_TEXT. Little-endian, the machine's own: the bytes never
 * leave the process that wrote them. The one form of computed groups outside DuckDB: spooled to
 * TEMP_DIR (spool/) and kept in the aggregate cache (aggregate-cache.ts).
 */

const NULL_TEXT = 0xffffffff;
const GEOMETRY = { none: 0, point: 1, cell: 2 } as const;

/** A buffer that grows as rows are written into it. */
export class RowWriter {
  private buffer = Buffer.allocUnsafe(1 << 16);
  private view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.length);
  private at = 0;
  private readonly types: AggregateColumn['type'][];

  constructor(columns: readonly AggregateColumn[]) {
    this.types = columns.map((c) => c.type);
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.at + bytes));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
    this.view = new DataView(grown.buffer, grown.byteOffset, grown.length);
  }

  private number(x: number | null): void {
    this.view.setFloat64(this.at, x === null ? NaN : x, true);
    this.at += 8;
  }

  private text(text: string | null): void {
    this.room(4 + (text === null ? 0 : 3 * text.length));
    this.view.setUint32(this.at, text === null ? NULL_TEXT : Buffer.byteLength(text), true);
    this.at += 4;
    if (text !== null) this.at += this.buffer.write(text, this.at, 'utf8');
  }

  write(row: AggregateRow): void {
    const start = this.at;
    this.room(4 + 8 * this.types.length + 33);
    this.at += 4;
    for (let i = 0; i < this.types.length; i++) {
      const v = row.values[i] ?? null;
      const type = this.types[i];
      if (type === 'text') {
        this.text(v as string | null);
        this.room(8 * (this.types.length - i) + 33);
      } else if (type === 'time') {
        this.view.setBigInt64(this.at, v as bigint, true);
        this.at += 8;
      } else this.number(v as number | null);
    }
    const g = row.geometry;
    this.view.setUint8(this.at++, g === null ? GEOMETRY.none : g.type === 'Point' ? GEOMETRY.point : GEOMETRY.cell);
    if (g?.type === 'Point') g.coordinates.forEach((x) => this.number(x));
    // A cell's ring is its south-west, south-east, north-east and north-west corners: two of them give its edges.
    if (g?.type === 'Polygon') {
      const [sw, , ne] = g.coordinates[0]!;
      [sw![0], sw![1], ne![0], ne![1]].forEach((x) => this.number(x));
    }
    this.view.setUint32(start, this.at - start - 4, true);
  }

  /** Bytes written since the last take. */
  get bytes(): number {
    return this.at;
  }

  /** The rows written since the last take, as bytes (a view: written out before the next write). */
  take(): Buffer {
    const bytes = this.buffer.subarray(0, this.at);
    this.at = 0;
    return bytes;
  }
}

/** A double of `view` at `p`, NaN read as null. */
function numberAt(view: DataView, p: number): number | null {
  const x = view.getFloat64(p, true);
  return x !== x ? null : x;
}

/** Rows of `bytes` from `at`, at most `most`, as many as are whole; where the first one not read starts. */
export function readRows(columns: readonly AggregateColumn[], bytes: Buffer, at: number, most: number): { rows: AggregateRow[]; at: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const types = columns.map((c) => c.type);
  const rows: AggregateRow[] = [];
  while (rows.length < most && at + 4 <= bytes.length && at + 4 + view.getUint32(at, true) <= bytes.length) {
    let p = at + 4;
    const values: AggregateRow['values'] = new Array(types.length);
    for (let i = 0; i < types.length; i++) {
      const type = types[i];
      if (type === 'text') {
        const length = view.getUint32(p, true);
        p += 4;
        if (length === NULL_TEXT) values[i] = null;
        else [values[i], p] = [bytes.toString('utf8', p, p + length), p + length];
      } else {
        values[i] = type === 'time' ? view.getBigInt64(p, true) : numberAt(view, p);
        p += 8;
      }
    }
    const tag = view.getUint8(p++);
    let geometry: AggregateGeometry = null;
    if (tag === GEOMETRY.point) geometry = { type: 'Point', coordinates: [numberAt(view, p)!, numberAt(view, p + 8)!] };
    if (tag === GEOMETRY.cell) geometry = cellPolygon(numberAt(view, p)!, numberAt(view, p + 8)!, numberAt(view, p + 16)!, numberAt(view, p + 24)!);
    rows.push({ values, geometry });
    at = at + 4 + view.getUint32(at, true);
  }
  return { rows, at };
}
