import duckdb from '@duckdb/node-bindings';
import type { DuckDBDataChunk } from '@duckdb/node-api';

/** Rows of a DuckDB chunk at most (STANDARD_VECTOR_SIZE): a larger chunk gets a sink of its own. */
export const CHUNK_ROWS = 2048;

type Fixed = Float64Array | BigInt64Array | Uint16Array | Uint8Array;
type FixedKind<T extends Fixed> = { new (length: number): T; new (buffer: ArrayBufferLike, offset: number, length: number): T; BYTES_PER_ELEMENT: number };

/**
 * A typed array grown by doubling: what a rendering reads of each row of a file (keys, offsets,
 * filter columns) is kept as memory, never as a JavaScript value per row that outlives its chunk.
 */
export class Growing<T extends Fixed> {
  private values: T;
  length = 0;

  constructor(
    private readonly kind: FixedKind<T>,
    capacity = 1 << 12,
  ) {
    this.values = new kind(capacity);
  }

  /** Room for `n` more rows, the array to write them into. */
  room(n: number): T {
    if (this.length + n > this.values.length) {
      const grown = new this.kind(Math.max(this.values.length * 2, this.length + n));
      (grown as Uint8Array).set(this.values.subarray(0, this.length) as Uint8Array);
      this.values = grown;
    }
    return this.values;
  }

  push(value: T extends BigInt64Array ? bigint : number): void {
    this.room(1)[this.length++] = value;
  }

  /** The rows so far. */
  get array(): T {
    return this.values.subarray(0, this.length) as T;
  }
}

/** Column `i` of a chunk: DuckDB's flat vector of fixed-width values as a view (valid while the chunk is), and its validity mask (null: no null). */
export function fixedColumn<T extends Fixed>(chunk: DuckDBDataChunk, i: number, kind: FixedKind<T>): { values: T; mask: Uint8Array | null } {
  const rows = chunk.rowCount;
  const vector = duckdb.data_chunk_get_vector(chunk.chunk, i);
  const data = duckdb.vector_get_data(vector, rows * kind.BYTES_PER_ELEMENT);
  return { values: new kind(data.buffer, data.byteOffset, rows), mask: duckdb.vector_get_validity(vector, Math.ceil(rows / 64) * 8) ?? null };
}

/** Whether row `r` of a vector with validity `mask` has a value (DuckDB's mask: bit `r & 7` of byte `r >> 3`). */
export const hasValue = (mask: Uint8Array | null, r: number): boolean => mask === null || ((mask[r >> 3]! >> (r & 7)) & 1) === 1;

/** Appends a chunk's order keys (its column `i`, epoch µs) to `keys`; a row without one cannot be placed in a window. */
export function appendKeys(keys: Growing<BigInt64Array>, chunk: DuckDBDataChunk, i: number): void {
  const { values, mask } = fixedColumn(chunk, i, BigInt64Array);
  for (let r = 0; r < values.length; r++) if (!hasValue(mask, r)) throw new Error('a rendered row without its key');
  keys.room(values.length).set(values, keys.length);
  keys.length += values.length;
}
