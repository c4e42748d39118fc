import type { DuckDBBlobValue, DuckDBConnection } from '@duckdb/node-api';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import type { Box } from '../sql/box.ts';
import { compileRows, type QuerySpec } from '../sql/compile.ts';
import type { RowFilter } from '../sql/filter-sql.ts';
import { ident } from '../sql/sql.ts';

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

/** The file's filter columns read in the order its rendering holds its rows (the dataset's total order). */
export async function readFilterIndex(c: DuckDBConnection, spec: QuerySpec, file: string, order: 'sort' | 'stored' = 'sort'): Promise<FilterIndex | null> {
  const fields = filterFields(spec.descriptor);
  if (!fields) return null;
  const q = compileRows({ spec, files: [file], select: () => ({ fields, join: '' }), from: null, to: null, order });
  return filterIndex(spec.descriptor, (await c.runAndReadAll(q.sql, q.params)).getColumns());
}

/** The index of the columns filterFields selects, as read (latitude, longitude, then each text column). */
export function filterIndex(d: DatasetDescriptor, rows: readonly (readonly unknown[])[]): FilterIndex | null {
  const columns = textFilterColumns(d)!;
  const n = rows[0]?.length ?? 0;
  const index: FilterIndex = { codes: new Map(), lat: new Float64Array(n), lon: new Float64Array(n), nullPoint: new Uint8Array(n) };
  for (let r = 0; r < n; r++) {
    const [lat, lon] = [rows[0]![r], rows[1]![r]];
    if (lat === null || lon === null) index.nullPoint[r] = 1;
    else [index.lat[r], index.lon[r]] = [lat as number, lon as number];
  }
  for (const [i, name] of columns.entries()) {
    const codes = encode(rows[i + 2] as readonly (DuckDBBlobValue | null)[]);
    // Too many values to index: the rendering still answers unfiltered windows, filtered ones go the old way.
    if (!codes) return null;
    (index.codes as Map<string, unknown>).set(name, codes);
  }
  return index;
}

/** Distinct texts as codes from 1 (0: null), or null beyond 65,535; DuckDB's text is UTF-8, so equal bytes are equal strings. */
function encode(column: readonly (DuckDBBlobValue | null)[]): { values: Map<string, number>; rows: Uint16Array } | null {
  const values = new Map<string, number>();
  const rows = new Uint16Array(column.length);
  for (const [r, blob] of column.entries()) {
    if (blob === null) continue;
    const v = Buffer.from(blob.bytes).toString('utf8');
    let code = values.get(v);
    if (code === undefined) values.set(v, (code = values.size + 1));
    if (code > 0xffff) return null;
    rows[r] = code;
  }
  return { values, rows };
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
