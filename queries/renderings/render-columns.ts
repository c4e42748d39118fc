import type { DuckDBDataChunk } from '@duckdb/node-api';
import { fixedColumn, hasValue, type Fixed, type FixedKind } from '../encode/vector-reader.ts';

/** Rows of a DuckDB chunk at most (STANDARD_VECTOR_SIZE): a larger chunk gets a sink of its own. */
export const CHUNK_ROWS = 2048;


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

/** Appends a chunk's order keys (its column `i`, epoch µs) to `keys`; a row without one cannot be placed in a window. */
export function appendKeys(keys: Growing<BigInt64Array>, chunk: DuckDBDataChunk, i: number): void {
  const { values, mask } = fixedColumn(chunk, i, BigInt64Array);
  for (let r = 0; r < values.length; r++) if (!hasValue(mask, r)) throw new Error('a rendered row without its key');
  keys.room(values.length).set(values, keys.length);
  keys.length += values.length;
}
