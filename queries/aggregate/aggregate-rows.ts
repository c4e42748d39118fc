import type { DuckDBDataChunk, DuckDBValue } from '@duckdb/node-api';
import { cellEdge, type AggregateShape } from './aggregate-shape.ts';
import type { AggregateColumns } from './compile-aggregate.ts';
import type { Instant } from '../instant.ts';
import { COMMON_LANE } from '../exact/exact-sum-sql.ts';
import { columnReader, type ColumnReader } from '../encode/vector-reader.ts';
import { addExact, exactDouble, exactMean, exactSumOf, pairDouble, pairMean, ZERO, type LaneTotal } from '../exact/exact-sum.ts';

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

/** A value of a result row (vector-reader.ts): a list of doubles as a view; undefined for a column the result lacks. */
type Cell = DuckDBValue | Float64Array | undefined;


const num = (v: Cell): number | null => (v === null || v === undefined ? null : Number(v));
const finiteOrNull = (x: number | null): number | null => (x === null || !Number.isFinite(x) ? null : x + 0);

/** A cell's polygon from its edges, counter-clockwise from its south-west corner (RFC 7946 exterior ring). */
export const cellPolygon = (w: number, s: number, e: number, n: number): AggregateGeometry => ({ type: 'Polygon', coordinates: [[[w, s], [e, s], [e, n], [w, n], [w, s]]] });

/** The polygon of cell (x, y) of a grid of `hundredths`. */
const gridCell = (x: number, y: number, hundredths: number): AggregateGeometry =>
  cellPolygon(cellEdge(x, hundredths, -180), cellEdge(y, hundredths, -90), cellEdge(x + 1, hundredths, -180), cellEdge(y + 1, hundredths, -90));


/** A result row's value by the column's position in the plan (-1: a column the result lacks); a list of doubles as a view. */
type At = (column: number) => Cell;

/** A summed measure's columns: non-null and non-finite counts, the common lane's total (w, t, u) and the rare values (v). */
interface Lane {
  c: number;
  f: number;
  t: number;
  u: number;
  w: number;
  v: number;
}

/**
 * Where each value of a group is in compileAggregate's result, found once per statement: a row is
 * then read by position, column by column, with no name built or looked up per row.
 */
interface Plan {
  shape: AggregateShape;
  b: number;
  /** Per key: its column (text), or its two (grid). */
  keys: number[][];
  /** The keys' columns in order. */
  keyColumns: number[];
  /** The source its result rows are read through (readRow), made at the first. */
  rows?: RowSource;
  n: number;
  /** Per stat: its column (count, minimum, maximum) or, summed, its lane. */
  stats: { column: number; lane: number }[];
  lanes: Lane[];
  lat: number;
  lon: number;
}

function planOf(index: (name: string) => number, shape: AggregateShape, cols: AggregateColumns): Plan {
  const keys = shape.keys.map((k, i) => (k.kind === 'grid' ? [index(`k${i}x`), index(`k${i}y`)] : [index(`k${i}`)]));
  const stats = shape.stats.map((s, i) => ({ column: 'fn' in s ? index(`s${i}`) : index('n'), lane: 'fn' in s && (s.fn === 'sum' || s.fn === 'mean') ? cols.summed.indexOf(s.column) : -1 }));
  const lanes = cols.summed.map((_, j) => ({ c: index(`c${j}`), f: index(`f${j}`), t: index(`t${j}`), u: index(`u${j}`), w: index(`w${j}`), v: index(`v${j}`) }));
  const stations = cols.stations ? [index('lat'), index('lon')] : [-1, -1];
  return { shape, b: index('b'), keys, keyColumns: keys.flat(), n: index('n'), stats, lanes, lat: stations[0]!, lon: stations[1]! };
}

/**
 * One group as a statement gives it, before its sums are rounded: what the groups of parts of a
 * window that share a bucket are merged from (aggregate-merge.ts). Keys as DuckDB gives them (a
 * grid's two indexes), counts, minima and maxima per stat (null for sums and means), and per lane
 * the non-null and non-finite counts and the exact total.
 */
export interface PartialGroup {
  bucket: Instant;
  keys: DuckDBValue[];
  n: number;
  stats: (number | null)[];
  lanes: { count: number; nonFinite: number; total: LaneTotal }[];
  lat: number | null;
  lon: number | null;
}

/** The exponent of a paired total's unit. */
const PAIR_EXPONENT = COMMON_LANE - 52;

/**
 * A sum's or mean's value, rounded once here: null over no value, and with a NaN or an infinity
 * among the values (the sum is not finite: null on the wire, as any such number). Finite values
 * past the largest double add up to an infinity, and a mean of tiny negatives can round to -0:
 * as for minima and maxima.
 */
function summedValue(fn: 'sum' | 'mean', count: number, nonFinite: number, total: LaneTotal): number | null {
  if (count === 0 || nonFinite > 0) return null;
  if ('scaled' in total) return finiteOrNull(fn === 'sum' ? exactDouble(total) : exactMean(total, count));
  return pairValue(fn, count, total.high, total.low);
}

/** summedValue of a paired total (at PAIR_EXPONENT) given as its two numbers: no object made. */
const pairValue = (fn: 'sum' | 'mean', count: number, high: number, low: number): number | null =>
  finiteOrNull(fn === 'sum' ? pairDouble(high, low, PAIR_EXPONENT) : pairMean(high, low, PAIR_EXPONENT, count));

/** A stat's value: DuckDB's for counts, minima and maxima (not finite: null, as every format writes it, and a cached answer kept as JSON could hold nothing else; -0 is 0); exact sums and means rounded once here. */
function statValue(g: PartialGroup, p: Plan, i: number): number | null {
  const stat = p.shape.stats[i]!;
  if (!('fn' in stat)) return g.n;
  const { lane } = p.stats[i]!;
  if (lane < 0) return finiteOrNull(g.stats[i]!);
  const { count, nonFinite, total } = g.lanes[lane]!;
  return summedValue(stat.fn as 'sum' | 'mean', count, nonFinite, total);
}

/** statValue read from a result row itself, with no partial group built: a total below 2^92 without rare values (nearly every group) as two numbers. */
function statAt(at: At, p: Plan, i: number): number | null {
  const stat = p.shape.stats[i]!;
  if (!('fn' in stat)) return Number(at(p.n));
  const { column, lane } = p.stats[i]!;
  if (lane < 0) return finiteOrNull(num(at(column)));
  const l = p.lanes[lane]!;
  const fn = stat.fn as 'sum' | 'mean';
  const count = Number(at(l.c));
  const nonFinite = Number(at(l.f));
  if (count === 0 || nonFinite > 0) return null;
  const w = at(l.w) as number | null | undefined;
  const rare = at(l.v);
  if (paired(w) && (rare === null || rare === undefined)) return pairValue(fn, count, w * TWO_40 + (at(l.t) as number), at(l.u) as number);
  return summedValue(fn, count, nonFinite, totalOf(at, l));
}

const TWO_40 = 2 ** 40;
/** Whether a total w × 2^80 + t × 2^40 + u is a pair of doubles exactly: −2^12 ≤ w < 2^12 (the total in [−2^92, 2^92)), high = w × 2^40 + t (at most 2^52 in magnitude), low = u. */
const paired = (w: unknown): w is number => typeof w === 'number' && w >= -(2 ** 12) && w < 2 ** 12;

/** A lane's exact total: its common lane's (w, t, u: a pair nearly always, an integer from 2^92 on) plus its rare values (v), if any. */
function totalOf(at: At, l: Lane): LaneTotal {
  const w = at(l.w) as number | null | undefined;
  const rare = at(l.v) as Float64Array | null | undefined;
  if (w === null || w === undefined) return rare ? exactSumOf(rare) : ZERO;
  const [t, u] = [at(l.t) as number, at(l.u) as number];
  const common: LaneTotal = paired(w) ? { high: w * TWO_40 + t, low: u, exponent: PAIR_EXPONENT } : { scaled: (BigInt(w) << 80n) + (BigInt(t) << 40n) + BigInt(u), exponent: PAIR_EXPONENT };
  return rare ? addExact(common, exactSumOf(rare)) : common;
}

function readPartial(at: At, p: Plan): PartialGroup {
  const keys: DuckDBValue[] = [];
  for (const columns of p.keys) for (const j of columns) keys.push((at(j) as DuckDBValue | undefined) ?? null);
  const lanes = p.lanes.map((lane) => ({ count: Number(at(lane.c)), nonFinite: Number(at(lane.f)), total: totalOf(at, lane) }));
  const stats = p.stats.map((s) => (s.lane < 0 ? num(at(s.column)) : null));
  return { bucket: at(p.b) as bigint, keys, n: Number(at(p.n)), stats, lanes, lat: num(at(p.lat)), lon: num(at(p.lon)) };
}

/** Where a group's keys and stats are read from: a partial group, or a result row (one reused from row to row). */
interface GroupSource {
  key(k: number): DuckDBValue | undefined;
  stat(i: number): number | null;
}

/** A group's values (an array of its final length) and geometry from its bucket, keys, stats and station point. */
function groupOf(p: Plan, bucket: Instant, source: GroupSource, lat: number | null, lon: number | null): AggregateRow {
  const values: AggregateRow['values'] = new Array(1 + p.keyColumns.length + p.stats.length);
  values[0] = bucket;
  let geometry: AggregateGeometry = null;
  let k = 0;
  for (const columns of p.keys) {
    if (columns.length === 1) {
      const v = source.key(k);
      values[++k] = v === null || v === undefined ? null : typeof v === 'string' ? v : String(v);
      continue;
    }
    const [x, y] = [num(source.key(k)), num(source.key(k + 1))];
    const c = p.shape.cellHundredths!;
    values[++k] = x === null ? null : cellEdge(x, c, -180);
    values[++k] = y === null ? null : cellEdge(y, c, -90);
    if (x !== null && y !== null) geometry = gridCell(x, y, c);
  }
  for (let i = 0; i < p.stats.length; i++) values[1 + k + i] = source.stat(i);
  if (lat !== null && lon !== null && Number.isFinite(lat) && Number.isFinite(lon)) geometry = { type: 'Point', coordinates: [lon, lat] };
  return { values, geometry };
}

const finishGroup = (g: PartialGroup, p: Plan): AggregateRow => groupOf(p, g.bucket, { key: (k) => g.keys[k], stat: (i) => statValue(g, p, i) }, g.lat, g.lon);

/** A plan's source of result rows, moved from row to row: no object or function made per group (millions of them). */
class RowSource implements GroupSource {
  at: At = () => undefined;
  constructor(private readonly p: Plan) {}
  key(k: number): DuckDBValue | undefined {
    return this.at(this.p.keyColumns[k]!) as DuckDBValue | undefined;
  }
  stat(i: number): number | null {
    return statAt(this.at, this.p, i);
  }
}

/** A result row as a group, read straight from its columns: no partial group built (the garbage of millions of groups). */
function readRow(at: At, p: Plan): AggregateRow {
  const source = (p.rows ??= new RowSource(p));
  source.at = at;
  return groupOf(p, at(p.b) as bigint, source, num(at(p.lat)), num(at(p.lon)));
}

/** Turns merged partial groups of compileAggregate's results into groups (the plan needs no result: only the shape). */
export function groupFinisher(shape: AggregateShape, cols: AggregateColumns): (g: PartialGroup) => AggregateRow {
  const p = planOf(() => -1, shape, cols);
  return (g) => finishGroup(g, p);
}

/** Visits a result chunk's rows, each read by `read` from only the columns it needs, by position. */
function visitorOf<T>(names: readonly string[], shape: AggregateShape, cols: AggregateColumns, read: (at: At, p: Plan) => T): (chunk: DuckDBDataChunk, visit: (row: T) => void) => void {
  const p = planOf((name) => names.indexOf(name), shape, cols);
  return (chunk, visit) => {
    const columns: (ColumnReader | undefined)[] = [];
    // One reader per chunk, moved from row to row: no function made per row.
    let at = 0;
    const value: At = (j) => (j < 0 ? undefined : (columns[j] ??= columnReader(chunk, j))(at));
    for (const count = chunk.rowCount; at < count; at++) visit(read(value, p));
  };
}

/** Reads a result chunk of compileAggregate a group at a time (`names`: the result's columns). */
export const chunkVisitor = (names: readonly string[], shape: AggregateShape, cols: AggregateColumns) => visitorOf(names, shape, cols, readRow);

/** A visitor's rows of a chunk as an array. */
function collect<T>(visitor: (chunk: DuckDBDataChunk, visit: (row: T) => void) => void): (chunk: DuckDBDataChunk) => T[] {
  return (chunk) => {
    const rows: T[] = [];
    visitor(chunk, (row) => rows.push(row));
    return rows;
  };
}

/** Reads a result chunk of compileAggregate as groups. */
export const chunkReader = (names: readonly string[], shape: AggregateShape, cols: AggregateColumns) => collect(chunkVisitor(names, shape, cols));

/** Reads a result chunk of compileAggregate as partial groups, to be merged with other parts' (aggregate-merge.ts). */
export const chunkPartials = (names: readonly string[], shape: AggregateShape, cols: AggregateColumns) => collect(visitorOf(names, shape, cols, readPartial));
