import duckdb from '@duckdb/node-bindings';
import { DuckDBTypeId } from '@duckdb/node-api';
import { Binary, Bool, Float64, Int32, Int64, makeData, Timestamp, type Data, type DataType } from 'apache-arrow';
import { OutOfLineStrings } from './arrow-strings.ts';
import { BatchValidity, clearPast } from './arrow-validity.ts';

/**
 * Arrow columns filled straight from DuckDB's result vectors (the C API's flat vectors, read through
 * @duckdb/node-bindings as @duckdb/node-api itself reads them): fixed-width values and validity are
 * copied as memory, strings and WKB as bytes — no JavaScript value is made per row.
 */
export interface ColumnSink {
  /** The DuckDB type the select must give this column. */
  readonly duckdbType: DuckDBTypeId;
  /** Rows `[from, from + count)` of a chunk of `rows` rows become rows `[at, at + count)` of the batch. */
  put(vector: duckdb.Vector, rows: number, from: number, count: number, at: number): void;
  /** The first `length` rows as Arrow data; valid until the next `put`. */
  take(length: number): Data;
}

/** DuckDB's validity mask of a chunk's vector (null when every row is valid). */
const maskOf = (vector: duckdb.Vector, rows: number): Uint8Array | null => duckdb.vector_get_validity(vector, Math.ceil(rows / 64) * 8) ?? null;

type FixedArray = Float64Array | Int32Array | BigInt64Array;
type FixedKind = { new (length: number): FixedArray; new (buffer: ArrayBufferLike, offset: number, length: number): FixedArray; BYTES_PER_ELEMENT: number };

/** Doubles, integers, bigints and epoch microseconds: DuckDB's vector is Arrow's buffer. */
class FixedSink implements ColumnSink {
  private readonly values: FixedArray;
  private readonly validity: BatchValidity;

  constructor(
    private readonly type: DataType,
    readonly duckdbType: DuckDBTypeId,
    private readonly kind: FixedKind,
    capacity: number,
  ) {
    this.values = new kind(capacity);
    this.validity = new BatchValidity(capacity);
  }

  put(vector: duckdb.Vector, rows: number, from: number, count: number, at: number): void {
    const data = duckdb.vector_get_data(vector, rows * this.kind.BYTES_PER_ELEMENT);
    const source = new this.kind(data.buffer, data.byteOffset, rows);
    (this.values as Float64Array).set((source as Float64Array).subarray(from, from + count), at);
    // A null's slot holds whatever DuckDB left there: zero it, so the bytes depend on the rows only.
    if (this.validity.copy(maskOf(vector, rows), from, count, at)) this.validity.forEachNull(at, count, (i) => (this.values[i] = this.values instanceof BigInt64Array ? 0n : 0));
  }

  take(length: number): Data {
    const data = makeData({ type: this.type, length, nullCount: this.validity.nulls, nullBitmap: this.validity.bitmap(length), data: this.values.subarray(0, length) } as never) as Data;
    this.validity.reset();
    return data;
  }
}

/** Booleans: one byte each in DuckDB, one bit each in Arrow. */
class BoolSink implements ColumnSink {
  readonly duckdbType = DuckDBTypeId.BOOLEAN;
  private readonly values: Uint8Array;
  private readonly validity: BatchValidity;

  constructor(capacity: number) {
    this.values = new Uint8Array((capacity + 7) >> 3);
    this.validity = new BatchValidity(capacity);
  }

  put(vector: duckdb.Vector, rows: number, from: number, count: number, at: number): void {
    const source = duckdb.vector_get_data(vector, rows);
    this.validity.copy(maskOf(vector, rows), from, count, at);
    for (let i = 0; i < count; i++) {
      const row = at + i;
      if (source[from + i] && this.validity.valid(row)) this.values[row >> 3]! |= 1 << (row & 7);
      else this.values[row >> 3]! &= ~(1 << (row & 7));
    }
  }

  take(length: number): Data {
    const data = makeData({ type: new Bool(), length, nullCount: this.validity.nulls, nullBitmap: this.validity.bitmap(length), data: clearPast(this.values, length) });
    this.validity.reset();
    return data;
  }
}

/** Bytes of DuckDB's `string_t`: 16 bytes, the length first, up to 12 bytes inline, else a pointer at byte 8. */
const STRING_T = 16;
const INLINE = 12;

/** VARCHAR as UTF-8 (DuckDB's strings are UTF-8 already) and BLOB (WKB): offsets and one data buffer. */
class BytesSink implements ColumnSink {
  private readonly offsets: Int32Array;
  private readonly validity: BatchValidity;
  private readonly outOfLine: OutOfLineStrings;
  private data = new Uint8Array(1 << 16);
  private end = 0;

  constructor(
    private readonly type: DataType,
    readonly duckdbType: DuckDBTypeId,
    capacity: number,
  ) {
    this.offsets = new Int32Array(capacity + 1);
    this.validity = new BatchValidity(capacity);
    this.outOfLine = new OutOfLineStrings(capacity);
  }

  put(vector: duckdb.Vector, rows: number, from: number, count: number, at: number): void {
    const strings = duckdb.vector_get_data(vector, rows * STRING_T);
    const words = new Uint32Array(strings.buffer, strings.byteOffset, rows * 4);
    const nulls = this.validity.copy(maskOf(vector, rows), from, count, at);
    // A null's length is whatever DuckDB left there: read lengths of valid rows only.
    const lengthOf = (i: number) => (nulls === 0 || this.validity.valid(at + i) ? words[(from + i) * 4]! : 0);
    let total = 0;
    for (let i = 0; i < count; i++) total += lengthOf(i);
    this.room(total);
    const data = this.data;
    let end = this.end;
    for (let i = 0; i < count; i++) {
      const length = lengthOf(i);
      const start = (from + i) * STRING_T + 4;
      if (length <= INLINE) for (let b = 0; b < length; b++) data[end + b] = strings[start + b]!;
      else this.outOfLine.add(words, from + i, length, end);
      this.offsets[at + i + 1] = end += length;
    }
    this.end = end;
    this.outOfLine.copyInto(this.data);
  }

  take(length: number): Data {
    const data = makeData({ type: this.type as Binary, length, nullCount: this.validity.nulls, nullBitmap: this.validity.bitmap(length), valueOffsets: this.offsets.subarray(0, length + 1), data: this.data.subarray(0, this.end) });
    this.validity.reset();
    this.end = 0;
    return data;
  }

  private room(length: number): void {
    if (this.end + length <= this.data.length) return;
    const grown = new Uint8Array(Math.max(this.data.length * 2, this.end + length));
    grown.set(this.data.subarray(0, this.end));
    this.data = grown;
  }
}

/** The sink of an Arrow field, and the DuckDB type its values must come in. */
export function sinkFor(type: DataType, capacity: number): ColumnSink {
  if (type instanceof Timestamp || type instanceof Int64) return new FixedSink(type, DuckDBTypeId.BIGINT, BigInt64Array, capacity);
  if (type instanceof Float64) return new FixedSink(type, DuckDBTypeId.DOUBLE, Float64Array, capacity);
  if (type instanceof Int32) return new FixedSink(type, DuckDBTypeId.INTEGER, Int32Array, capacity);
  if (type instanceof Bool) return new BoolSink(capacity);
  if (type instanceof Binary) return new BytesSink(type, DuckDBTypeId.BLOB, capacity);
  return new BytesSink(type, DuckDBTypeId.VARCHAR, capacity);
}
