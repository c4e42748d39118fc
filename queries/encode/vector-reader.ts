import duckdb from '@duckdb/node-bindings';
import { DuckDBTypeId, type DuckDBDataChunk, type DuckDBValue } from '@duckdb/node-api';

/**
 * DuckDB's vectors read fast, through the client library's public bindings: a flat vector of
 * fixed-width values as a typed-array view and its validity mask, instead of a JavaScript value a
 * row. The client library reads each row's validity bit through three bigint operations: at
 * millions of rows, the most costly part of reading a group. The one reader of vectors in queries/.
 */

/** A column's value by row (a list of doubles as a view of DuckDB's data, valid while its chunk is). */
export type ColumnReader = (row: number) => DuckDBValue | Float64Array;

export type Fixed = Float64Array | BigInt64Array | Uint16Array | Uint8Array;
export type FixedKind<T extends Fixed> = { new (length: number): T; new (buffer: ArrayBufferLike, offset: number, length: number): T; BYTES_PER_ELEMENT: number };

/** The validity mask of a vector of `rows` rows (null: no null). */
const maskOf = (vector: duckdb.Vector, rows: number): Uint8Array | null => duckdb.vector_get_validity(vector, Math.ceil(rows / 64) * 8) ?? null;

/** A flat vector of `rows` fixed-width values as a view (valid while its chunk is), and its validity mask (null: no null). */
function fixedValues<T extends Fixed>(vector: duckdb.Vector, rows: number, kind: FixedKind<T>): { values: T; mask: Uint8Array | null } {
  const data = duckdb.vector_get_data(vector, rows * kind.BYTES_PER_ELEMENT);
  return { values: new kind(data.buffer, data.byteOffset, rows), mask: maskOf(vector, rows) };
}

/** Column `i` of a chunk: DuckDB's flat vector of fixed-width values as a view (valid while the chunk is), and its validity mask (null: no null). */
export const fixedColumn = <T extends Fixed>(chunk: DuckDBDataChunk, i: number, kind: FixedKind<T>): { values: T; mask: Uint8Array | null } =>
  fixedValues(duckdb.data_chunk_get_vector(chunk.chunk, i), chunk.rowCount, kind);

/** Whether row `r` of a vector with validity `mask` has a value (DuckDB's mask: bit `r & 7` of byte `r >> 3`). */
export const hasValue = (mask: Uint8Array | null, r: number): boolean => mask === null || ((mask[r >> 3]! >> (r & 7)) & 1) === 1;

/**
 * A flat LIST(DOUBLE) vector by row: each list a view of the child vector's values (its entries are
 * an offset and a length, two 64-bit words a row), or a copy without the nulls it holds.
 */
function doubleLists(vector: duckdb.Vector, rows: number): ColumnReader {
  const data = duckdb.vector_get_data(vector, rows * 16);
  const entries = new BigUint64Array(data.buffer, data.byteOffset, rows * 2);
  const mask = maskOf(vector, rows);
  const size = duckdb.list_vector_get_size(vector);
  const items = size === 0 ? { values: new Float64Array(0), mask: null } : fixedValues(duckdb.list_vector_get_child(vector), size, Float64Array);
  return (row) => {
    if (!hasValue(mask, row)) return null;
    const at = Number(entries[2 * row]!);
    const view = items.values.subarray(at, at + Number(entries[2 * row + 1]!));
    return items.mask === null ? view : view.filter((_, i) => hasValue(items.mask, at + i));
  };
}

/**
 * Reads column `j` of a chunk by row as the library's getItem does: null where the mask says so, a
 * DOUBLE straight from the vector's data, a LIST(DOUBLE) as views of its values (doubleLists), any
 * other type's value by getItem.
 */
export function columnReader(chunk: DuckDBDataChunk, j: number): ColumnReader {
  const vector = duckdb.data_chunk_get_vector(chunk.chunk, j);
  const type = duckdb.vector_get_column_type(vector);
  const id = duckdb.get_type_id(type);
  if (id === (DuckDBTypeId.DOUBLE as number)) {
    const { values, mask } = fixedValues(vector, chunk.rowCount, Float64Array);
    return (row) => (hasValue(mask, row) ? values[row]! : null);
  }
  if (id === (DuckDBTypeId.LIST as number) && duckdb.get_type_id(duckdb.list_type_child_type(type)) === (DuckDBTypeId.DOUBLE as number)) return doubleLists(vector, chunk.rowCount);
  const mask = maskOf(vector, chunk.rowCount);
  const column = chunk.getColumnVector(j);
  return (row) => (hasValue(mask, row) ? column.getItem(row) : null);
}
