import { DuckDBDoubleVector, type DuckDBValue, type DuckDBVector } from '@duckdb/node-api';

/** A column's value by row. */
export type ColumnReader = (row: number) => DuckDBValue;

/** What a vector of the client library holds (its own fields, not part of its typed interface): read only when they are what is expected. */
interface VectorInside {
  items?: unknown;
  validity?: { data?: unknown; offset?: unknown };
}

/** 32-bit word k of a 64-bit mask word's array holds its bits 32k to 32k + 31 only on a little-endian machine. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * The validity of a vector as 32-bit words (bit r of the mask: row r is not null), null when every
 * row is valid, undefined when the vector does not hold its mask as expected. The client library
 * reads each row's bit through three bigint operations: at millions of rows, the most costly part
 * of reading a group.
 */
function validityWords(vector: DuckDBVector): Uint32Array | null | undefined {
  if (!LITTLE_ENDIAN) return undefined;
  const validity = (vector as unknown as VectorInside).validity;
  if (!validity || validity.offset !== 0) return undefined;
  const data = validity.data;
  if (data === null) return null;
  return data instanceof BigUint64Array ? new Uint32Array(data.buffer, data.byteOffset, data.length * 2) : undefined;
}

/**
 * Reads a column of a chunk by row as `getItem` does: null where the mask says so, a DOUBLE
 * straight from the vector's array, any other type's value by `getItem` (which reads its bit
 * again). Where the library's vector is not as expected (another version), by `getItem` alone.
 */
export function columnReader(vector: DuckDBVector): ColumnReader {
  const words = validityWords(vector);
  const get = (row: number) => vector.getItem(row);
  if (words === undefined) return get;
  const items = (vector as unknown as VectorInside).items;
  const doubles = vector instanceof DuckDBDoubleVector && items instanceof Float64Array ? items : null;
  const valid = (row: number) => words === null || ((words[row >>> 5]! >>> (row & 31)) & 1) === 1;
  if (doubles) return (row) => (valid(row) ? doubles[row]! : null);
  return (row) => (valid(row) ? get(row) : null);
}
