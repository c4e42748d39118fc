import duckdb from '@duckdb/node-bindings';
import type { DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import { Binary, type Data } from 'apache-arrow';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import type { Box } from '../sql/box.ts';
import { compileRows, type QuerySpec } from '../sql/compile.ts';
import type { RowFilter } from '../sql/filter-sql.ts';
import { ident } from '../sql/sql.ts';
import { sinkFor } from '../encode/arrow-columns.ts';
import { fixedColumn, hasValue } from '../encode/vector-reader.ts';
import { CHUNK_ROWS, Growing } from './render-columns.ts';

/**
 * What a dataset's filters read of each row of a rendered file, in the rendering's order: each text
 * filter column as codes into its distinct values (0: null), and the point's latitude and longitude
 * (null: a flag). About 19 bytes a row: enough to answer a filtered or boxed window without DuckDB.
 */
export interface FilterIndex {
  codes: ReadonlyMap<string, { values: Map<string, number>; rows: Uint16Array }>;
  lat: Float64Array;
  lon: Float64Array;
  nullPoint: Uint8Array;
}

/** The text columns a dataset's filters compare (a dataset with another kind of filter column has none indexed). */
const textFilterColumns = (d: DatasetDescriptor): string[] | null => {
  const columns = d.filters.map((f) => f.column);
  return columns.every((c) => d.columns.find((x) => x.name === c)?.type === 'VARCHAR') ? columns : null;
};

/** Whether every filter of a request can be answered from a rendered file's FilterIndex. */
export function indexable(d: DatasetDescriptor, filters: readonly RowFilter[]): boolean {
  // No filters: the rendering answers from its rows alone, whatever the dataset's filter columns are.
  if (filters.length === 0) return true;
  const columns = textFilterColumns(d);
  if (!columns || d.geometry.kind !== 'point') return false;
  return filters.every((f) => f.kind === 'box' || ((f.kind === 'equals' || f.kind === 'anyOf') && columns.includes(f.column)));
}

/** What a FilterIndex is read from, as select fields over the file's rows `t`; null: the dataset's filters are not indexed. */
export function filterFields(d: DatasetDescriptor): string | null {
  const columns = textFilterColumns(d);
  if (!columns || d.geometry.kind !== 'point') return null;
  // Text as bytes: a JavaScript string read from DuckDB ends at its first NUL.
  return [`t.${ident(d.geometry.latitude)}`, `t.${ident(d.geometry.longitude)}`, ...columns.map((name) => `encode(t.${ident(name)})`)].join(', ');
}

/** The file's filter columns read in the order its rendering holds its rows (the dataset's total order), a chunk at a time. */
export async function readFilterIndex(c: DuckDBConnection, spec: QuerySpec, file: string, order: 'sort' | 'stored'): Promise<FilterIndex | null> {
  const fields = filterFields(spec.descriptor);
  if (!fields) return null;
  const q = compileRows({ spec, files: [file], select: () => ({ fields, join: '' }), from: null, to: null, order });
  const result = await c.stream(q.sql, q.params);
  const reader = new FilterIndexReader(spec.descriptor);
  for (let chunk: DuckDBDataChunk | null; (chunk = await result.fetchChunk()) && chunk.rowCount > 0; ) reader.add(chunk, 0);
  return reader.index();
}

/**
 * A FilterIndex read from the columns filterFields selects (latitude, longitude, then each text
 * column), a chunk at a time, straight from DuckDB's vectors: no JavaScript value per row is kept
 * but the index's own arrays (a file's blobs read as values were about 200 bytes a row of garbage).
 */
export class FilterIndexReader {
  private readonly lat = new Growing(Float64Array);
  private readonly lon = new Growing(Float64Array);
  private readonly nullPoint = new Growing(Uint8Array);
  private readonly codes: { name: string; values: Map<string, number>; rows: Growing<Uint16Array> }[];
  private text = sinkFor(new Binary(), CHUNK_ROWS);
  private capacity = CHUNK_ROWS;
  /** A text column with more distinct values than a code holds: no index. */
  private tooMany = false;

  constructor(d: DatasetDescriptor) {
    this.codes = textFilterColumns(d)!.map((name) => ({ name, values: new Map(), rows: new Growing(Uint16Array) }));
  }

  /** The chunk's rows, its filter columns from column `first` on. */
  add(chunk: DuckDBDataChunk, first: number): void {
    const rows = chunk.rowCount;
    const [lat, lon] = [fixedColumn(chunk, first, Float64Array), fixedColumn(chunk, first + 1, Float64Array)];
    const [lats, lons, nulls] = [this.lat.room(rows), this.lon.room(rows), this.nullPoint.room(rows)];
    for (let r = 0, at = this.lat.length; r < rows; r++, at++) {
      const point = hasValue(lat.mask, r) && hasValue(lon.mask, r);
      [lats[at], lons[at], nulls[at]] = point ? [lat.values[r]!, lon.values[r]!, 0] : [0, 0, 1];
    }
    for (const g of [this.lat, this.lon, this.nullPoint]) g.length += rows;
    // Past a code's range nothing is indexed: the texts are not read on.
    if (this.tooMany) return;
    if (rows > this.capacity) [this.text, this.capacity] = [sinkFor(new Binary(), rows), rows];
    for (const [k, column] of this.codes.entries()) {
      this.text.put(duckdb.data_chunk_get_vector(chunk.chunk, first + 2 + k), rows, 0, rows, 0);
      this.encode(this.text.take(rows), column);
    }
  }

  /** The index of the rows added, or null: a text column has too many values to index. */
  index(): FilterIndex | null {
    if (this.tooMany) return null;
    return { codes: new Map(this.codes.map((c) => [c.name, { values: c.values, rows: c.rows.array }])), lat: this.lat.array, lon: this.lon.array, nullPoint: this.nullPoint.array };
  }

  /** Distinct texts as codes from 1 (0: null); DuckDB's text is UTF-8, so equal bytes are equal strings. */
  private encode(data: Data, column: (typeof this.codes)[number]): void {
    const codes = column.rows.room(data.length);
    const bytes = data.values as Uint8Array;
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let r = 0, at = column.rows.length; r < data.length; r++, at++) {
      if (!data.getValid(r)) {
        codes[at] = 0;
        continue;
      }
      const v = text.toString('utf8', data.valueOffsets[r], data.valueOffsets[r + 1]);
      let code = column.values.get(v);
      if (code === undefined) column.values.set(v, (code = column.values.size + 1));
      // Too many values to index: the rendering still answers unfiltered windows, filtered ones go the old way.
      if (code > 0xffff) this.tooMany = true;
      codes[at] = code & 0xffff;
    }
    column.rows.length += data.length;
  }
}

// DuckDB orders NaN above every number: NaN ≥ any bound, and never ≤ a bound that is a number.
const atLeast = (v: number, bound: number) => Number.isNaN(v) || v >= bound;
const atMost = (v: number, bound: number) => !Number.isNaN(v) && v <= bound;

/** The SQL of filter-sql.ts's pointInBox, with DuckDB's ordering of doubles; a null point matches no box. */
function inBox(index: FilterIndex, r: number, box: Box): boolean {
  if (index.nullPoint[r]) return false;
  const [lat, lon] = [index.lat[r]!, index.lon[r]!];
  if (!(atLeast(lat, box.minLat) && atMost(lat, box.maxLat))) return false;
  return box.minLon <= box.maxLon ? atLeast(lon, box.minLon) && atMost(lon, box.maxLon) : atLeast(lon, box.minLon) || atMost(lon, box.maxLon);
}

/** One filter as a test of row r: a null value matches nothing (SQL's `=` and list_contains over NULL). */
function rowTest(index: FilterIndex, f: RowFilter): (r: number) => boolean {
  if (f.kind === 'box') return (r) => inBox(index, r, f.box);
  if (f.kind !== 'equals' && f.kind !== 'anyOf') throw new Error('a filter the index cannot answer');
  const column = index.codes.get(f.column)!;
  const wanted = new Set((f.kind === 'equals' ? [f.value] : f.values).map((v) => column.values.get(v) ?? -1));
  return (r) => column.rows[r] !== 0 && wanted.has(column.rows[r]!);
}

/** Rows of [first, end) every filter keeps, as runs [start, end) of consecutive rows. */
export function matchingRuns(index: FilterIndex, filters: readonly RowFilter[], first: number, end: number): [number, number][] {
  const tests = filters.map((f) => rowTest(index, f));
  const runs: [number, number][] = [];
  for (let r = first; r < end; r++) {
    if (!tests.every((t) => t(r))) continue;
    const last = runs.at(-1);
    if (last && last[1] === r) last[1] = r + 1;
    else runs.push([r, r + 1]);
  }
  return runs;
}
