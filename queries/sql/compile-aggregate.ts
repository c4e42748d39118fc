import type { AggregateKey } from '../../datasets/index.ts';
import type { Window } from '../window.ts';
import type { AggregateShape, Interval } from './aggregate-shape.ts';
import { compileWhere, hasStations, stationPoints, type Compiled, type QuerySpec } from './compile.ts';
import { ident, readParquet } from './sql.ts';

export interface AggregateQuery {
  spec: QuerySpec;
  files: readonly string[];
  window: Window;
  shape: AggregateShape;
  /** Most groups returned (the caller asks for one more than it sends, to see a cut). */
  limit: number;
}

/**
 * The result's columns, in order: `b` (bucket start, epoch µs), one column per key (`grid` two:
 * the cell's column and row index), `n` (rows), one per stat but `count`, then per summed measure
 * its non-null and non-finite counts and `limbs`, and the station's `lat`, `lon` when joined.
 */
export interface AggregateColumns {
  keys: string[];
  stats: (string | null)[];
  /** The measures whose sum (or mean) is asked, in lane order. */
  summed: string[];
  stations: boolean;
}

const US = { hour: 3_600_000_000n, day: 86_400_000_000n, week: 604_800_000_000n } as const;
/** 1970-01-05, the first Monday after the epoch: ISO weeks start there. */
const MONDAY_US = 4n * US.day;

/** The UTC start of each row's bucket, from epoch microseconds (no time zone enters). */
function bucketSql(interval: Interval, time: string, bind: (v: string) => string, from: bigint): string {
  const us = `epoch_us(${time})`;
  if (interval === 'all') return `CAST(${bind(String(from))} AS BIGINT)`;
  if (interval === 'month' || interval === 'year') return `epoch_us(date_trunc('${interval}', make_timestamp(${us})))`;
  const size = US[interval];
  const offset = interval === 'week' ? MONDAY_US : 0n;
  return `(${us} - (((${us} - ${offset}) % ${size}) + ${size}) % ${size})`;
}

/**
 * The cell index of a coordinate: the floor of its offset over the cell size, moved by one where
 * rounding put it across an edge (edges computed exactly as cellEdge does), so a point on a west
 * or south edge is in that cell; 180 and 90 are in the last cell.
 */
function cellIndexSql(v: string, origin: -180 | -90, hundredths: number): string {
  const edge = (i: string) => `((${i}) * ${hundredths} + ${origin * 100}) / 100.0`;
  const i0 = `CAST(floor((${v} - (${origin})) * 100 / ${hundredths}) AS BIGINT)`;
  const last = (-origin * 200) / hundredths - 1;
  return `least(${i0} - CAST(${v} < ${edge(i0)} AS BIGINT) + CAST(${v} >= ${edge(`${i0} + 1`)} AS BIGINT), ${last})`;
}

function keySql(spec: QuerySpec, key: AggregateKey, i: number, hundredths: number | null): string[] {
  if (key.kind !== 'grid') return [`t.${ident(key.column)} AS k${i}`];
  const g = spec.descriptor.geometry;
  if (g.kind !== 'point' || hundredths === null) throw new Error(`${spec.descriptor.name}: a grid needs point geometry and a cell size`);
  const [lon, lat] = [`t.${ident(g.longitude)}`, `t.${ident(g.latitude)}`];
  const inside = `isfinite(${lon}) AND isfinite(${lat}) AND ${lon} BETWEEN -180 AND 180 AND ${lat} BETWEEN -90 AND 90`;
  return [`CASE WHEN ${inside} THEN ${cellIndexSql(lon, -180, hundredths)} END AS k${i}x`, `CASE WHEN ${inside} THEN ${cellIndexSql(lat, -90, hundredths)} END AS k${i}y`];
}

/** Key column names in order (a grid key is two). */
const keyNames = (keys: readonly AggregateKey[]): string[] => keys.flatMap((k, i) => (k.kind === 'grid' ? [`k${i}x`, `k${i}y`] : [`k${i}`]));

export function aggregateColumns(q: Pick<AggregateQuery, 'spec' | 'shape'>): AggregateColumns {
  const summed = [...new Set(q.shape.stats.flatMap((s) => ('fn' in s && (s.fn === 'sum' || s.fn === 'mean') ? [s.column] : [])))];
  const stats = q.shape.stats.map((s, i) => ('fn' in s && s.fn !== 'sum' && s.fn !== 'mean' ? `s${i}` : null));
  const stations = q.shape.keys.some((k) => k.kind === 'station') && hasStations(q.spec);
  return { keys: keyNames(q.shape.keys), stats, summed, stations };
}

/**
 * A measure's exact sum as integers (no floating-point addition, so no order of addition can
 * change it): each finite non-zero value x is m × 2^(e − 52) with e a multiple of 32 at most its
 * binary exponent minus one, so m is a whole number below 2^87, exact as HUGEINT; the m of one
 * exponent are summed as integers. `limbs` lists `lane:e:sum` per exponent; summed.ts rounds the
 * total once. The power of two is applied in two halves so neither overflows a double.
 */
function limbsSql(keys: string[], laneColumns: string[]): string {
  const lanes = laneColumns.map((m, j) => `{'j': ${j}, 'x': ${m}}`).join(', ');
  const finite = `u.x <> 0 AND isfinite(u.x)`;
  const exponent = `CASE WHEN ${finite} THEN CAST(32 * floor((floor(log2(abs(u.x))) - 1) / 32) AS INTEGER) END`;
  const half = `floor((52 - e) / 2)`;
  const mantissa = `CAST(x * pow(2.0, ${half}) * pow(2.0, (52 - e) - ${half}) AS HUGEINT)`;
  const by = ['b', ...keys].join(', ');
  const values = `SELECT ${by}, u.j AS j, u.x AS x, ${exponent} AS e FROM (SELECT ${by}, unnest([${lanes}]) AS u FROM r) WHERE ${finite}`;
  const perExponent = `SELECT ${by}, j, e, sum(${mantissa}) AS s FROM (${values}) GROUP BY ${by}, j, e`;
  return `l AS (SELECT ${by}, string_agg(concat(j, ':', e, ':', s), ' ') AS limbs FROM (${perExponent}) GROUP BY ${by})`;
}

function statSql(shape: AggregateShape, measureOf: (column: string) => string): string[] {
  return shape.stats.flatMap((s, i) => {
    if (!('fn' in s) || s.fn === 'sum' || s.fn === 'mean') return [];
    const m = measureOf(s.column);
    return [s.fn === 'count' ? `count(${m})::BIGINT AS s${i}` : `${s.fn}(${m}) AS s${i}`];
  });
}

/** One statement: rows of the window bucketed and keyed (r), grouped (g), summed exactly (l), ordered by bucket then keys, nulls last. */
export function compileAggregate(q: AggregateQuery): Compiled {
  const { spec, shape } = q;
  const d = spec.descriptor;
  if (!d.time) throw new Error(`${d.name} has no time axis`);
  const params: string[] = [];
  const bind = (v: string) => (params.push(v), `$${params.length}`);
  const cols = aggregateColumns(q);
  const measures = [...new Set(shape.stats.flatMap((s) => ('fn' in s ? [s.column] : [])))];
  const measureOf = (column: string) => `m${measures.indexOf(column)}`;
  const bucket = bucketSql(shape.interval, `t.${ident(d.time.column)}`, bind, q.window.from);
  const keys = shape.keys.flatMap((k, i) => keySql(spec, k, i, shape.cellHundredths));
  const where = compileWhere(spec, q.window.from, q.window.to, params);
  const r = `r AS (SELECT ${[`${bucket} AS b`, ...keys, ...measures.map((m, i) => `t.${ident(m)} AS m${i}`)].join(', ')} FROM ${readParquet(q.files, spec.dataDir)} AS t${where})`;
  const lanes = cols.summed.flatMap((m, j) => [`count(${measureOf(m)})::BIGINT AS c${j}`, `(count(*) FILTER (WHERE NOT isfinite(${measureOf(m)})))::BIGINT AS f${j}`]);
  const by = ['b', ...cols.keys].join(', ');
  const g = `g AS (SELECT ${[by, 'count(*)::BIGINT AS n', ...statSql(shape, measureOf), ...lanes].join(', ')} FROM r GROUP BY ${by})`;
  const ctes = [r, g, ...(cols.summed.length ? [limbsSql(cols.keys, cols.summed.map(measureOf))] : [])];
  const sameGroup = ['g.b = l.b', ...cols.keys.map((k) => `g.${k} IS NOT DISTINCT FROM l.${k}`)].join(' AND ');
  const stationKey = shape.keys.findIndex((k) => k.kind === 'station');
  const joins = [
    cols.summed.length ? ` LEFT JOIN l ON ${sameGroup}` : '',
    cols.stations ? ` LEFT JOIN (${stationPoints({ ...spec, stationFiles: spec.stationFiles ?? [] })}) AS s ON s.sid = g.k${stationKey}` : '',
  ].join('');
  const select = ['g.*', ...(cols.summed.length ? ['l.limbs'] : []), ...(cols.stations ? ['s.lat', 's.lon'] : [])].join(', ');
  const order = ['g.b', ...cols.keys.map((k) => `g.${k} ASC NULLS LAST`)].join(', ');
  return { sql: `WITH ${ctes.join(', ')} SELECT ${select} FROM g${joins} ORDER BY ${order} LIMIT ${Math.trunc(q.limit)}`, params };
}
