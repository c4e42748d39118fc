import type { AggregateKey } from '../../datasets/index.ts';
import type { Window } from '../window.ts';
import type { AggregateShape } from './aggregate-shape.ts';
import { compileWhere, hasStations, stationPoints, type Compiled, type QuerySpec } from './compile.ts';
import { correctedValue } from './correction-sql.ts';
import { ident, readParquet } from './sql.ts';
import { bucketSql, cellKeySql, guessSql, rawCellSql } from './aggregate-keys.ts';

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
 * Counts come as DOUBLE (exact below 2^53): read as numbers, not as a bigint each.
 */
export interface AggregateColumns {
  keys: string[];
  /** The measures whose sum (or mean) is asked, in lane order. */
  summed: string[];
  stations: boolean;
}

/** A key's columns in the rows (r): a grid's raw cell indexes (rawCellSql), from its coordinates and first guesses read below them. */
function keySql(spec: QuerySpec, key: AggregateKey, i: number, hundredths: number | null): { read: string[]; row: string[]; scratch: string[] } {
  if (key.kind !== 'grid') return { read: [`t.${ident(key.column)} AS k${i}`], row: [], scratch: [] };
  const g = spec.descriptor.geometry;
  if (g.kind !== 'point' || hundredths === null) throw new Error(`${spec.descriptor.name}: a grid needs point geometry and a cell size`);
  const [lon, lat] = [`t.${ident(g.longitude)}`, `t.${ident(g.latitude)}`];
  const guesses = hundredths % 25 === 0 ? [] : [`${guessSql(lon, -180, hundredths)} AS ix`, `${guessSql(lat, -90, hundredths)} AS iy`];
  return { scratch: ['vx', 'vy', ...(guesses.length ? ['ix', 'iy'] : [])], read: [`${lon} AS vx`, `${lat} AS vy`, ...guesses], row: [`${rawCellSql('vx', -180, hundredths)} AS k${i}x`, `${rawCellSql('vy', -90, hundredths)} AS k${i}y`] };
}

/** The groups of raw cells with their cell keys in place (several raw ones can make one cell, or the null cell): a SELECT over `from`, null when no grid. */
function cellsOf(from: string, keys: readonly AggregateKey[], hundredths: number | null): string | null {
  const i = keys.findIndex((k) => k.kind === 'grid');
  if (i < 0 || hundredths === null) return null;
  const [x, y] = cellKeySql(`k${i}x`, `k${i}y`, hundredths);
  return `SELECT * REPLACE (${x} AS k${i}x, ${y} AS k${i}y) FROM ${from}`;
}

/** Key column names in order (a grid key is two). */
const keyNames = (keys: readonly AggregateKey[]): string[] => keys.flatMap((k, i) => (k.kind === 'grid' ? [`k${i}x`, `k${i}y`] : [`k${i}`]));

export function aggregateColumns(q: Pick<AggregateQuery, 'spec' | 'shape'>): AggregateColumns {
  const summed = [...new Set(q.shape.stats.flatMap((s) => ('fn' in s && (s.fn === 'sum' || s.fn === 'mean') ? [s.column] : [])))];
  const stations = q.shape.keys.some((k) => k.kind === 'station') && hasStations(q.spec);
  return { keys: keyNames(q.shape.keys), summed, stations };
}

/**
 * A measure's exact sum as integers (no floating-point addition, so no order of addition can
 * change it): each finite non-zero value x is m × 2^(e − 52) with e ≡ 16 (mod 32) at most its
 * binary exponent minus one, so m is a whole number below 2^85. The lanes are placed so that one,
 * e = −16, holds every |x| in [2^−15, 2^17): nearly every value of nearly every measure. There m
 * is summed as its two 64-bit halves (hi, the whole part of x × 2^36, and lo, the rest below 2^32:
 * both exact, as scaling a double by a power of two and subtracting two that differ by a small
 * whole number are), which DuckDB adds far faster than 128-bit values; a value in another lane is
 * listed with its own e and m, for exact-sum.ts to add. e is null for a null, zero or non-finite
 * value, which then adds nothing.
 */
const COMMON_LANE = -16;
const pow2 = (k: string) => `pow(2.0, ${k})`;
/** The lane's exponent: two comparisons for the common lane, a logarithm only outside it. */
function exponentSql(x: string): string {
  const a = `abs(${x})`;
  const general = `CAST(32 * floor((floor(log2(${a})) + 15) / 32) - 16 AS INTEGER)`;
  return `CASE WHEN ${x} <> 0 AND isfinite(${x}) THEN CASE WHEN ${a} >= ${pow2('-15')} AND ${a} < ${pow2('17')} THEN ${COMMON_LANE} ELSE ${general} END END`;
}
/** m of a value outside the common lane, exact in 128 bits: x × 2^(52 − e) in two halves, so that neither power overflows a double. */
function rareMantissaSql(x: string, e: string): string {
  const half = `floor((52 - ${e}) / 2)`;
  return `CAST(${x} * ${pow2(half)} * ${pow2(`(52 - ${e}) - ${half}`)} AS HUGEINT)`;
}

/** Counts, minima and maxima of the rows. */
function statSql(shape: AggregateShape, measureOf: (column: string) => string): string[] {
  return shape.stats.flatMap((s, i) => {
    if (!('fn' in s) || s.fn === 'sum' || s.fn === 'mean') return [];
    return [`${s.fn}(${measureOf(s.column)})${s.fn === 'count' ? '::DOUBLE' : ''} AS s${i}`];
  });
}

/** One summed measure's aggregates: counts, the common lane's integer sum (h), the sum of its values in another lane (o, by lane l). */
function laneSql(x: string, j: number): string[] {
  const common = `e${j} = ${COMMON_LANE}`;
  const hi = `floor(${x} * ${pow2('36')})`;
  const halves = [`CASE WHEN ${common} THEN CAST(${hi} AS BIGINT) END`, `CASE WHEN ${common} THEN CAST(${x} * ${pow2('68')} - ${hi} * 4294967296.0 AS BIGINT) END`];
  return [
    `count(${x})::DOUBLE AS c${j}`,
    `count(*) FILTER (WHERE NOT isfinite(${x}))::DOUBLE AS f${j}`,
    `(sum(${halves[0]})::HUGEINT * 4294967296 + sum(${halves[1]})) AS h${j}`,
    `sum(CASE WHEN NOT ${common} THEN ${rareMantissaSql(x, `e${j}`)} END) AS o${j}`,
  ];
}

/** A count, minimum or maximum of partial groups, merged. */
const mergedStat = (fn: string, i: number) => `${fn === 'count' ? 'sum' : fn}(s${i}) AS s${i}`;

/**
 * Summed measures. The rows are grouped by the keys and, per measure j, the lane l of a value
 * outside the common one (p): a group of ordinary values is one such part, a group with others a
 * few (at most one per lane present), never one per value. The parts are merged per group (q),
 * and the other lanes' sums listed, one `j:e:m` item per lane (o: at most ~68 per measure).
 * Per lane j: counts, the common lane's sum as one integer (t) at its exponent (a), or, for a
 * group with values in other lanes, every lane in `limbs` (the common one among them);
 * exact-sum.ts adds them exactly and rounds once.
 */
function summedGroupsSql(keys: string[], shape: AggregateShape, measureOf: (column: string) => string, summed: string[], cells: (from: string) => string | null): string[] {
  const by = keys.join(', ');
  const lanes = summed.map((_, j) => `l${j}`);
  const laneOf = summed.map((_, j) => `CASE WHEN e${j} <> ${COMMON_LANE} THEN e${j} END AS l${j}`);
  const aggregates = summed.flatMap((m, j) => laneSql(measureOf(m), j));
  const parted = `SELECT ${[by, ...laneOf, 'count(*)::DOUBLE AS n', ...statSql(shape, measureOf), ...aggregates].join(', ')} FROM r GROUP BY ${[by, ...lanes].join(', ')}`;
  const celled = cells(`(${parted})`);
  const p = `p AS (${celled ?? parted})`;
  const parts = summed.map((_, j) => `SELECT ${by}, ${j} AS j, l${j} AS l, o${j} AS o FROM p WHERE l${j} IS NOT NULL`).join(' UNION ALL ');
  const listed = summed.map((_, j) => `string_agg(concat(j, ':', l, ':', o), ' ') FILTER (WHERE j = ${j}) AS o${j}`);
  const o = `o AS (SELECT ${[by, ...listed].join(', ')} FROM (SELECT ${by}, j, l, sum(o) AS o FROM (${parts}) GROUP BY ${by}, j, l) GROUP BY ${by})`;
  const stats = shape.stats.flatMap((s, i) => ('fn' in s && s.fn !== 'sum' && s.fn !== 'mean' ? [i] : []));
  const merged = summed.flatMap((_, j) => [`sum(c${j}) AS c${j}`, `sum(f${j}) AS f${j}`, `sum(h${j}) AS h${j}`]);
  const q = `q AS (SELECT ${[by, 'sum(n) AS n', ...stats.map((i) => mergedStat((shape.stats[i] as { fn: string }).fn, i)), ...merged].join(', ')} FROM p GROUP BY ${by})`;
  const same = keys.map((k) => `q.${k} IS NOT DISTINCT FROM o.${k}`).join(' AND ');
  const lanesOut = summed.flatMap((_, j) => [`c${j}`, `f${j}`, `${COMMON_LANE} AS a${j}`, `CASE WHEN o${j} IS NULL THEN h${j} END AS t${j}`]);
  const items = summed.map((_, j) => `CASE WHEN o${j} IS NOT NULL THEN concat_ws(' ', CASE WHEN h${j} IS NOT NULL THEN concat(${j}, ':${COMMON_LANE}:', h${j}) END, o${j}) END`);
  const list = `CASE WHEN ${summed.map((_, j) => `o${j} IS NOT NULL`).join(' OR ')} THEN concat_ws(' ', ${items.join(', ')}) END AS limbs`;
  const g = `g AS (SELECT ${[...keys.map((k) => `q.${k}`), 'n', ...stats.map((i) => `s${i}`), ...lanesOut, list].join(', ')} FROM q LEFT JOIN o ON ${same})`;
  return [p, o, q, g];
}

/** One statement: rows of the window bucketed and keyed (r), grouped (g; through p when summed exactly), ordered by bucket then keys, nulls last. */
export function compileAggregate(q: AggregateQuery): Compiled {
  const { spec, shape } = q;
  const d = spec.descriptor;
  if (!d.time) throw new Error(`${d.name} has no time axis`);
  const params: string[] = [];
  const bind = (v: string) => (params.push(v), `$${params.length}`);
  const cols = aggregateColumns(q);
  const measures = [...new Set(shape.stats.flatMap((s) => ('fn' in s ? [s.column] : [])))];
  const measureOf = (column: string) => `m${measures.indexOf(column)}`;
  const bucket = bucketSql(shape.interval, `t.${ident(d.time.column)}`, bind, q.window);
  const keys = shape.keys.map((k, i) => keySql(spec, k, i, shape.cellHundredths));
  const where = compileWhere(spec, q.window.from, q.window.to, params);
  // The measures as the data endpoint serves them: corrected by the request's model, if any (raw otherwise).
  const values = measures.map((m, i) => `${correctedValue(d, spec.correction ?? null, m, (name) => `t.${ident(name)}`, bind)} AS m${i}`);
  const rows = `SELECT ${[`${bucket} AS b`, ...keys.flatMap((k) => k.read), ...values].join(', ')} FROM ${readParquet(q.files, spec.dataDir)} AS t${where}`;
  const exponents = cols.summed.map((m, j) => `${exponentSql(measureOf(m))} AS e${j}`);
  const cellRows = keys.flatMap((k) => k.row);
  const scratch = keys.flatMap((k) => k.scratch);
  const own = scratch.length ? ` EXCLUDE (${scratch.join(', ')})` : '';
  const r = `r AS (SELECT ${[`*${own}`, ...cellRows, ...exponents].join(', ')} FROM (${rows}))`;
  const by = ['b', ...cols.keys].join(', ');
  const cells = (from: string) => cellsOf(from, shape.keys, shape.cellHundredths);
  const plain = `SELECT ${[by, 'count(*)::DOUBLE AS n', ...statSql(shape, measureOf)].join(', ')} FROM r GROUP BY ${by}`;
  const merged = shape.stats.flatMap((s, i) => ('fn' in s ? [mergedStat(s.fn, i)] : []));
  const celled = cells(`(${plain})`);
  const g = `g AS (${celled ? `SELECT ${[by, 'sum(n) AS n', ...merged].join(', ')} FROM (${celled}) GROUP BY ${by}` : plain})`;
  const groups = cols.summed.length ? summedGroupsSql(['b', ...cols.keys], shape, measureOf, cols.summed, cells) : [g];
  const stationKey = shape.keys.findIndex((k) => k.kind === 'station');
  const join = cols.stations ? ` LEFT JOIN (${stationPoints({ ...spec, stationFiles: spec.stationFiles ?? [] })}) AS s ON s.sid = g.k${stationKey}` : '';
  const select = ['g.*', ...(cols.stations ? ['s.lat', 's.lon'] : [])].join(', ');
  const order = ['g.b', ...cols.keys.map((k) => `g.${k} ASC NULLS LAST`)].join(', ');
  return { sql: `WITH ${[r, ...groups].join(', ')} SELECT ${select} FROM g${join} ORDER BY ${order} LIMIT ${Math.trunc(q.limit)}`, params };
}
