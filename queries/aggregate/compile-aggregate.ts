import type { AggregateKey } from '../../datasets/index.ts';
import type { Window } from '../window.ts';
import type { AggregateShape } from './aggregate-shape.ts';
import { compileWhere, hasStations, stationPoints, type Compiled, type QuerySpec } from '../sql/compile.ts';
import { correctedValue } from '../sql/correction-sql.ts';
import { ident, readParquet } from '../sql/sql.ts';
import { bucketSql, cellKeySql, guessSql, rawCellSql } from './aggregate-keys.ts';
import { mergedStat, statSql, summedGroupsSql } from '../exact/exact-sum-sql.ts';

export interface AggregateQuery {
  spec: QuerySpec;
  files: readonly string[];
  window: Window;
  /** The window the buckets are labelled by, when `window` is a part of it cut inside a bucket (the window itself otherwise). */
  labels?: Window;
  shape: AggregateShape;
  /** Most groups returned (the caller asks for one more than it sends, to see a cut). */
  limit: number;
  /** What every file of `files` was found to be (their FileFacts, all at once); absent: nothing known. */
  facts?: FilesFacts;
}

/** The facts (FileFacts) that hold for every file a statement reads: measures wholly in the common lane, and positions all inside the grid. */
export interface FilesFacts {
  common: ReadonlySet<string>;
  inGrid: boolean;
}

/**
 * The result's columns, in order: `b` (bucket start, epoch µs), one column per key (`grid` two:
 * the cell's column and row index), `n` (rows), one per stat but `count`, then per summed measure
 * its non-null and non-finite counts (c, f), its common lane's total (w, t, u) and, unless the
 * facts say there are none, its rare values (v, a list), and the station's
 * `lat`, `lon` when joined.
 * Counts come as DOUBLE (exact below 2^53): read as numbers, not as a bigint each.
 */
export interface AggregateColumns {
  keys: string[];
  /** The measures whose sum (or mean) is asked, in lane order. */
  summed: string[];
  stations: boolean;
}

/** A key's columns in the rows (r): a grid's raw cell indexes (rawCellSql), from its coordinates and first guesses read below them. */
function keySql(spec: QuerySpec, key: AggregateKey, i: number, hundredths: number | null, inGrid: boolean): { read: string[]; row: string[]; scratch: string[] } {
  if (key.kind !== 'grid') return { read: [`t.${ident(key.column)} AS k${i}`], row: [], scratch: [] };
  const g = spec.descriptor.geometry;
  if (g.kind !== 'point' || hundredths === null) throw new Error(`${spec.descriptor.name}: a grid needs point geometry and a cell size`);
  const [lon, lat] = [`t.${ident(g.longitude)}`, `t.${ident(g.latitude)}`];
  const guesses = hundredths % 25 === 0 ? [] : [`${guessSql(lon)} AS ix`, `${guessSql(lat)} AS iy`];
  return { scratch: ['vx', 'vy', ...(guesses.length ? ['ix', 'iy'] : [])], read: [`${lon} AS vx`, `${lat} AS vy`, ...guesses], row: [`${rawCellSql('vx', -180, hundredths, inGrid)} AS k${i}x`, `${rawCellSql('vy', -90, hundredths, inGrid)} AS k${i}y`] };
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
  const bucket = bucketSql(shape.interval, `t.${ident(d.time.column)}`, bind, q.labels ?? q.window);
  const keys = shape.keys.map((k, i) => keySql(spec, k, i, shape.cellHundredths, q.facts?.inGrid ?? false));
  const where = compileWhere(spec, q.window.from, q.window.to, params);
  // The measures as the data endpoint serves them: corrected by the request's model, if any (raw otherwise).
  const values = measures.map((m, i) => `${correctedValue(d, spec.correction ?? null, m, (name) => `t.${ident(name)}`, bind)} AS m${i}`);
  const rows = `SELECT ${[`${bucket.key} AS b`, ...keys.flatMap((k) => k.read), ...values].join(', ')} FROM ${readParquet(q.files, spec.dataDir)} AS t${where}`;
  const cellRows = keys.flatMap((k) => k.row);
  const scratch = keys.flatMap((k) => k.scratch);
  const own = scratch.length ? ` EXCLUDE (${scratch.join(', ')})` : '';
  const r = `r AS (SELECT ${[`*${own}`, ...cellRows].join(', ')} FROM (${rows}))`;
  const by = ['b', ...cols.keys].join(', ');
  const cells = (from: string) => cellsOf(from, shape.keys, shape.cellHundredths);
  const plain = `SELECT ${[by, 'count(*)::DOUBLE AS n', ...statSql(shape, measureOf)].join(', ')} FROM r GROUP BY ${by}`;
  const merged = shape.stats.flatMap((s, i) => ('fn' in s ? [mergedStat(s.fn, i)] : []));
  const celled = cells(`(${plain})`);
  const g = `g AS (${celled ? `SELECT ${[by, 'sum(n) AS n', ...merged].join(', ')} FROM (${celled}) GROUP BY ${by}` : plain})`;
  // Facts are of the stored values: a corrected series' values are others.
  const allCommon = !spec.correction && cols.summed.every((m) => q.facts?.common.has(m));
  const groups = cols.summed.length ? summedGroupsSql(['b', ...cols.keys], shape, measureOf, cols.summed, cells, allCommon) : [g];
  const stationKey = shape.keys.findIndex((k) => k.kind === 'station');
  const join = cols.stations ? ` LEFT JOIN (${stationPoints({ ...spec, stationFiles: spec.stationFiles ?? [] })}) AS s ON s.sid = g.k${stationKey}` : '';
  const select = ['g.*', ...(cols.stations ? ['s.lat', 's.lon'] : [])].join(', ');
  const order = ['g.b', ...cols.keys.map((k) => `g.${k} ASC NULLS LAST`)].join(', ');
  // Bucket numbers become starts over the groups (the order is the same).
  const grouped = bucket.start ? `(SELECT * REPLACE (${bucket.start('b')} AS b) FROM g) AS g` : 'g';
  return { sql: `WITH ${[r, ...groups].join(', ')} SELECT ${select} FROM ${grouped}${join} ORDER BY ${order} LIMIT ${Math.trunc(q.limit)}`, params };
}
