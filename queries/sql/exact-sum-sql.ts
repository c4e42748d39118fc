import type { AggregateShape } from './aggregate-shape.ts';

/**
 * A measure's exact sum as integers (no floating-point addition, so no order of addition can
 * change it): each finite non-zero value x is m × 2^(e − 52) with e ≡ 16 (mod 32) at most its
 * binary exponent minus one, so m is a whole number below 2^85. The lanes are placed so that one,
 * e = −16, holds every |x| in [2^−15, 2^17): nearly every value of nearly every measure. There m
 * is summed as its two 64-bit halves (hi, the whole part of x × 2^36, and lo, the rest below 2^32:
 * both exact, as scaling a double by a power of two and subtracting two that differ by a small
 * whole number are), which DuckDB adds far faster than 128-bit values. The other values (rare)
 * are kept as they are, per group, and summed per lane afterwards, for exact-sum.ts to add.
 * Null, zero and non-finite values add nothing.
 */
const COMMON_LANE = -16;
const pow2 = (k: string) => `pow(2.0, ${k})`;

/**
 * Whether x is summed in the common lane (w): |x| in about [2^−15, 2^17), or zero (which adds
 * nothing), by one subtraction and one comparison. Where exactly the bounds fall does not
 * matter: the halves are exact for any |x| in [2^−16, 2^27), and a value is either here or in
 * the group's rare values, never both. False for NaN and the infinities; null for null.
 */
const commonSql = (x: string) => `abs(abs(${x}) + CAST(${x} = 0 AS DOUBLE) - 65536.0) < 65535.99997`;
/** The lane of a rare value, by its logarithm: never the common one (which a value just below 2^−15 could round to). */
function exponentSql(x: string): string {
  const lane = `CAST(32 * floor((floor(log2(abs(${x}))) + 15) / 32) - 16 AS INTEGER)`;
  return `CASE WHEN abs(${x}) < 1 THEN least(${lane}, ${COMMON_LANE - 32}) ELSE greatest(${lane}, ${COMMON_LANE + 32}) END`;
}
/** m of a value in lane e, exact in 128 bits: x × 2^(52 − e) in two halves, so that neither power overflows a double. */
function mantissaSql(x: string, e: string): string {
  const half = `floor((52 - ${e}) / 2)`;
  return `CAST(${x} * ${pow2(half)} * ${pow2(`(52 - ${e}) - ${half}`)} AS HUGEINT)`;
}

/** Counts, minima and maxima of the rows. */
export function statSql(shape: AggregateShape, measureOf: (column: string) => string): string[] {
  return shape.stats.flatMap((s, i) => {
    if (!('fn' in s) || s.fn === 'sum' || s.fn === 'mean') return [];
    return [`${s.fn}(${measureOf(s.column)})${s.fn === 'count' ? '::DOUBLE' : ''} AS s${i}`];
  });
}

/** A count, minimum or maximum of partial groups, merged. */
export const mergedStat = (fn: string, i: number) => `${fn === 'count' ? 'sum' : fn}(s${i}) AS s${i}`;

/** Per row, for measure j: w (common lane) and z, the value where it is common and 0 (or NaN, from a non-finite value) where not. */
const laneRowSql = (x: string, j: number): [string, string] => [`${commonSql(x)} AS w${j}`, `${x} * CAST(w${j} AS DOUBLE) AS z${j}`];

/**
 * One summed measure's aggregates over rows: count, the non-finite values (f: z is NaN exactly
 * for those), the common lane's integer sum (h) and the group's other finite values (v: rare
 * ones only, so NaN-heavy measures keep no lists). z needs no filter (which costs more than the
 * sum): 0 adds nothing, and a NaN makes no integer (TRY_CAST: null, skipped).
 */
function laneSql(x: string, j: number): string[] {
  const hi = `floor(z${j} * ${pow2('36')})`;
  const halves = [`TRY_CAST(${hi} AS BIGINT)`, `TRY_CAST(z${j} * ${pow2('68')} - ${hi} * 4294967296.0 AS BIGINT)`];
  return [
    `count(${x})::DOUBLE AS c${j}`,
    `sum(CAST(isnan(z${j}) AS DOUBLE)) AS f${j}`,
    `(sum(${halves[0]})::HUGEINT * 4294967296 + sum(${halves[1]})) AS h${j}`,
    `list(${x}) FILTER (WHERE NOT w${j} AND isfinite(${x})) AS v${j}`,
  ];
}

/**
 * Summed measures. The rows are grouped by the keys once (p: through `cells` when a grid's raw
 * cells are turned into cells), each group keeping its rare values; those are summed per lane
 * and listed, one `j:e:m` item per lane (o: at most ~68 per measure), and the groups merged (q).
 * Per measure j: counts, the common lane's sum as one integer (t) at its exponent (a), or, for a
 * group with values in other lanes, every lane in `limbs` (the common one among them);
 * exact-sum.ts adds them exactly and rounds once.
 */
export function summedGroupsSql(keys: string[], shape: AggregateShape, measureOf: (column: string) => string, summed: string[], cells: (from: string) => string | null): string[] {
  const by = keys.join(', ');
  const aggregates = summed.flatMap((m, j) => laneSql(measureOf(m), j));
  const perRow = summed.map((m, j) => laneRowSql(measureOf(m), j));
  const rows = `(SELECT *, ${perRow.map((x) => x[1]).join(', ')} FROM (SELECT *, ${perRow.map((x) => x[0]).join(', ')} FROM r))`;
  const grouped = `SELECT ${[by, 'count(*)::DOUBLE AS n', ...statSql(shape, measureOf), ...aggregates].join(', ')} FROM ${rows} GROUP BY ${by}`;
  const celled = cells(`(${grouped})`);
  const p = `p AS (${celled ?? grouped})`;
  const rare = summed.map((_, j) => `SELECT ${by}, ${j} AS j, unnest(v${j}) AS x FROM p WHERE v${j} IS NOT NULL`).join(' UNION ALL ');
  const lanes = `SELECT ${by}, j, l, sum(${mantissaSql('x', 'l')}) AS o FROM (SELECT *, ${exponentSql('x')} AS l FROM (${rare})) GROUP BY ${by}, j, l`;
  const listed = summed.map((_, j) => `string_agg(concat(j, ':', l, ':', o), ' ') FILTER (WHERE j = ${j}) AS o${j}`);
  const o = `o AS (SELECT ${[by, ...listed].join(', ')} FROM (${lanes}) GROUP BY ${by})`;
  const stats = shape.stats.flatMap((s, i) => ('fn' in s && s.fn !== 'sum' && s.fn !== 'mean' ? [i] : []));
  const laneCols = summed.flatMap((_, j) => [`c${j}`, `f${j}`, `h${j}`]);
  const statCols = stats.map((i) => `s${i}`);
  // Raw grid cells turned into cells share keys and are merged; other groups of p are the keys'
  // own, and a second GROUP BY of them cost a fifth of an hourly × station statement.
  const merging = stats.map((i) => mergedStat((shape.stats[i] as { fn: string }).fn, i));
  const q = celled
    ? `q AS (SELECT ${[by, 'sum(n) AS n', ...merging, ...laneCols.map((x) => `sum(${x}) AS ${x}`)].join(', ')} FROM p GROUP BY ${by})`
    : `q AS (SELECT ${[by, 'n', ...statCols, ...laneCols].join(', ')} FROM p)`;
  const same = keys.map((k) => `q.${k} IS NOT DISTINCT FROM o.${k}`).join(' AND ');
  const lanesOut = summed.flatMap((_, j) => [`c${j}`, `coalesce(q.f${j}, 0)::DOUBLE AS f${j}`, `${COMMON_LANE} AS a${j}`, `CASE WHEN o${j} IS NULL THEN h${j} END AS t${j}`]);
  const items = summed.map((_, j) => `CASE WHEN o${j} IS NOT NULL THEN concat_ws(' ', CASE WHEN h${j} IS NOT NULL THEN concat(${j}, ':${COMMON_LANE}:', h${j}) END, o${j}) END`);
  const list = `CASE WHEN ${summed.map((_, j) => `o${j} IS NOT NULL`).join(' OR ')} THEN concat_ws(' ', ${items.join(', ')}) END AS limbs`;
  const g = `g AS (SELECT ${[...keys.map((k) => `q.${k}`), 'n', ...stats.map((i) => `s${i}`), ...lanesOut, list].join(', ')} FROM q LEFT JOIN o ON ${same})`;
  return [p, o, q, g];
}
