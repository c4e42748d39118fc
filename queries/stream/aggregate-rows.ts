import type { DuckDBDataChunk, DuckDBValue } from '@duckdb/node-api';
import { cellEdge, type AggregateShape } from '../sql/aggregate-shape.ts';
import type { AggregateColumns } from '../sql/compile-aggregate.ts';
import type { Instant } from '../instant.ts';
import { exactDouble, laneTotals, roundRational } from './exact-sum.ts';

/** How a column's values are written: a bucket start, text, a whole number or a double. */
export type AggregateColumnType = 'time' | 'text' | 'integer' | 'double';

export interface AggregateColumn {
  name: string;
  type: AggregateColumnType;
}

export type AggregateGeometry = { type: 'Point'; coordinates: [number, number] } | { type: 'Polygon'; coordinates: [number, number][][] } | null;

/** One group: its values in column order (a bucket as epoch µs) and its geometry. */
export interface AggregateRow {
  values: (Instant | string | number | null)[];
  geometry: AggregateGeometry;
}

/** The response's columns: `bucket`, the keys in the order asked (`grid` as cellLon, cellLat), then the stats by name. */
export function aggregateColumnList(shape: AggregateShape): AggregateColumn[] {
  const keys = shape.keys.flatMap((k): AggregateColumn[] =>
    k.kind === 'grid' ? [{ name: 'cellLon', type: 'double' }, { name: 'cellLat', type: 'double' }] : [{ name: k.name, type: 'text' }],
  );
  const stats = shape.stats.map((s): AggregateColumn => ({ name: s.name, type: !('fn' in s) || s.fn === 'count' ? 'integer' : 'double' }));
  return [{ name: 'bucket', type: 'time' }, ...keys, ...stats];
}

/** A lane without values: its count is 0, so its total is never read. */
const NO_TOTAL = { scaled: 0n, exponent: 0 };

const num = (v: DuckDBValue | undefined): number | null => (v === null || v === undefined ? null : Number(v));
const finiteOrNull = (x: number | null): number | null => (x === null || !Number.isFinite(x) ? null : x + 0);

/** The cell polygon, counter-clockwise from its south-west corner (RFC 7946 exterior ring). */
function cellPolygon(x: number, y: number, hundredths: number): AggregateGeometry {
  const [w, s, e, n] = [cellEdge(x, hundredths, -180), cellEdge(y, hundredths, -90), cellEdge(x + 1, hundredths, -180), cellEdge(y + 1, hundredths, -90)];
  return { type: 'Polygon', coordinates: [[[w, s], [e, s], [e, n], [w, n], [w, s]]] };
}

/** A result row's value by column name. */
export type RowValue = (name: string) => DuckDBValue | undefined;

/** A stat's value: DuckDB's for counts, minima and maxima; exact sums and means rounded once here; null over no finite values. */
function statValue(row: RowValue, stat: AggregateShape['stats'][number], i: number, cols: AggregateColumns, totals: ReturnType<typeof laneTotals>): number | null {
  if (!('fn' in stat)) return Number(row('n'));
  // Not finite: null, as for sums and as every format writes it (a cached answer, kept as JSON, could hold nothing else); -0 is 0.
  if (stat.fn !== 'sum' && stat.fn !== 'mean') return finiteOrNull(num(row(`s${i}`)));
  const j = cols.summed.indexOf(stat.column);
  const [count, nonFinite] = [Number(row(`c${j}`)), Number(row(`f${j}`))];
  // A NaN or an infinity among the values makes the sum not finite: null on the wire, as any such number.
  if (count === 0 || nonFinite > 0) return null;
  const total = totals[j]!;
  // Finite values past the largest double add up to an infinity, and a mean of tiny negatives can round to -0: as for minima and maxima.
  return finiteOrNull(stat.fn === 'sum' ? exactDouble(total) : roundRational(total.scaled, BigInt(count), total.exponent));
}

/** One result row of compileAggregate as a group. */
export function readAggregateRow(row: RowValue, shape: AggregateShape, cols: AggregateColumns): AggregateRow {
  const values: AggregateRow['values'] = [row('b') as bigint];
  let geometry: AggregateGeometry = null;
  shape.keys.forEach((k, i) => {
    const key = row(`k${i}`);
    if (k.kind !== 'grid') return void values.push(key === null || key === undefined ? null : String(key));
    const [x, y] = [num(row(`k${i}x`)), num(row(`k${i}y`))];
    const c = shape.cellHundredths!;
    values.push(x === null ? null : cellEdge(x, c, -180), y === null ? null : cellEdge(y, c, -90));
    if (x !== null && y !== null) geometry = cellPolygon(x, y, c);
  });
  // Only a group with a lane of several exponents lists them (rare): the others carry one total per lane.
  const limbs = (row('limbs') as string | null | undefined) ?? null;
  const listed = limbs === null ? null : laneTotals(limbs, cols.summed.length);
  const totals = cols.summed.map((_, j) => {
    const t = row(`t${j}`);
    return t === null || t === undefined ? (listed?.[j] ?? NO_TOTAL) : { scaled: t as bigint, exponent: Number(row(`a${j}`)) - 52 };
  });
  shape.stats.forEach((s, i) => values.push(statValue(row, s, i, cols, totals)));
  const [lat, lon] = [num(row('lat')), num(row('lon'))];
  if (cols.stations && lat !== null && lon !== null && Number.isFinite(lat) && Number.isFinite(lon)) geometry = { type: 'Point', coordinates: [lon, lat] };
  return { values, geometry };
}

/** Reads a result chunk of compileAggregate as groups, column by column (`names`: the result's columns). */
export function chunkReader(names: readonly string[], shape: AggregateShape, cols: AggregateColumns): (chunk: DuckDBDataChunk) => AggregateRow[] {
  return (chunk) => {
    const columns = chunk.getColumns();
    const byName = new Map(names.map((name, j) => [name, columns[j]!]));
    // One reader per chunk, moved from row to row: no function made per row.
    let at = 0;
    const row: RowValue = (name) => byName.get(name)?.[at];
    const rows: AggregateRow[] = [];
    for (; at < chunk.rowCount; at++) rows.push(readAggregateRow(row, shape, cols));
    return rows;
  };
}
