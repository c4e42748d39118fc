/** The statistics asked, in order: `count`, or a function over one measure (aggregate-shape.ts's Stat). */
interface Stats {
  readonly stats: readonly ({ name: string } | { name: string; column: string; fn: string })[];
}

/**
 * A measure's exact sum as integers (no floating-point addition, so no order of addition can
 * change it): each finite non-zero value x is m × 2^(e − 52) with e ≡ 16 (mod 32) at most its
 * binary exponent minus one, so m is a whole number below 2^85. The lanes are placed so that one,
 * e = −16, holds every |x| in [2^−15, 2^17): nearly every value of nearly every measure. There m
 * is summed as its two 64-bit halves (hi, the whole part of x × 2^36, and lo, the rest below 2^32:
 * both exact, as scaling a double by a power of two and subtracting two that differ by a small
 * whole number are), which DuckDB adds far faster than 128-bit values. The other values (rare)
 * are listed per group, for exact-sum.ts to add exactly (exactSumOf). Null, zero and non-finite
 * values add nothing. COMMON_LANE is that lane's e: a total w × 2^80 + t × 2^40 + u (totalSql)
 * is in units of 2^(COMMON_LANE − 52).
 */
export const COMMON_LANE = -16;
const pow2 = (k: string) => `pow(2.0, ${k})`;

/**
 * Whether x is summed in the common lane (w): |x| in about [2^−15, 2^17), or zero (which adds
 * nothing), by one subtraction and one comparison. Where exactly the bounds fall does not
 * matter: the halves are exact for any |x| in [2^−16, 2^27), and a value is either here or in
 * the group's rare values, never both. False for NaN and the infinities; null for null.
 */
export const commonSql = (x: string) => `abs(abs(${x}) + CAST(${x} = 0 AS DOUBLE) - 65536.0) < 65535.99997`;
/**
 * A common lane's total h (HUGEINT, or null) as three exact doubles, h = w × 2^80 + t × 2^40 + u:
 * w = h >> 80 (a shift rounds down), t and u the next and the last 40 bits (never negative).
 * Doubles, not the HUGEINT: a Parquet file (the spool's) would keep it as one double. Bit
 * operations: a 128-bit division cost more than the rest of the statement's last step.
 */
const totalSql = (h: string, j: number): string[] => [
  `CAST(${h} >> 80 AS DOUBLE) AS w${j}`,
  `CAST((${h} >> 40) & 1099511627775 AS DOUBLE) AS t${j}`,
  `CAST(${h} & 1099511627775 AS DOUBLE) AS u${j}`,
];

/** Counts, minima and maxima of the rows. */
export function statSql(shape: Stats, measureOf: (column: string) => string): string[] {
  return shape.stats.flatMap((s, i) => {
    if (!('fn' in s) || s.fn === 'sum' || s.fn === 'mean') return [];
    return [`${s.fn}(${measureOf(s.column)})${s.fn === 'count' ? '::DOUBLE' : ''} AS s${i}`];
  });
}

/** A count, minimum or maximum of partial groups, merged. */
export const mergedStat = (fn: string, i: number) => `${fn === 'count' ? 'sum' : fn}(s${i}) AS s${i}`;

/** Per row, for measure j: w (common lane) and z, the value where it is common and 0 (or NaN, from a non-finite value) where not. */
const laneRowSql = (x: string, j: number): [string, string] => [`${commonSql(x)} AS w${j}`, `${x} * CAST(w${j} AS DOUBLE) AS z${j}`];

/** A common-lane value's two 64-bit halves (hi, lo: see the top), each made an integer by `cast` (TRY_CAST: a NaN gives null). */
function halvesSql(x: string, cast: 'CAST' | 'TRY_CAST'): [string, string] {
  const hi = `floor(${x} * ${pow2('36')})`;
  return [`${cast}(${hi} AS BIGINT)`, `${cast}(${x} * ${pow2('68')} - ${hi} * 4294967296.0 AS BIGINT)`];
}

/** The common lane's integer sum h of measure j, from its halves. */
const laneSumSql = ([hi, lo]: [string, string], j: number) => `(sum(${hi})::HUGEINT * 4294967296 + sum(${lo})) AS h${j}`;

/** The stats that are a count, minimum or maximum of a measure (a sum or mean comes from the lanes), by position; and each merged over partial groups. */
function keptStats(shape: Stats): { stats: number[]; merging: string[] } {
  const stats = shape.stats.flatMap((s, i) => ('fn' in s && s.fn !== 'sum' && s.fn !== 'mean' ? [i] : []));
  return { stats, merging: stats.map((i) => mergedStat((shape.stats[i] as { fn: string }).fn, i)) };
}

/**
 * One summed measure's aggregates over rows: its count, its finite values' count (d: the rest are
 * not finite), the common lane's integer sum (h) and the group's other finite values (v: rare ones
 * only, so NaN-heavy measures keep no lists). z needs no filter (which costs more than the sum): 0
 * adds nothing, and a NaN makes no integer (TRY_CAST: null, skipped, and not counted in d).
 */
function laneSql(x: string, j: number): string[] {
  const halves = halvesSql(`z${j}`, 'TRY_CAST');
  return [
    `count(${x})::DOUBLE AS c${j}`,
    `count(${halves[0]})::DOUBLE AS d${j}`,
    laneSumSql(halves, j),
    `list(${x}) FILTER (WHERE NOT w${j} AND isfinite(${x})) AS v${j}`,
  ];
}

/**
 * Summed measures: the rows are grouped by the keys once (through `cells` when a grid's raw cells
 * are turned into cells, then merged), the non-finite values counted there (c − d). Per measure j:
 * counts, the common lane's total (w, t, u: totalSql) and the group's rare values (v, a list, null
 * without any); exact-sum.ts adds them exactly and rounds once.
 * `allCommon`: every value of every measure in the files read is known to be zero or in the common
 * lane (FileFacts.common; null values aside), so no per-row test, no rare values and no non-finite
 * ones: each group is one pass over its rows, its sums the same columns with the same bytes.
 */
export function summedGroupsSql(keys: string[], shape: Stats, measureOf: (column: string) => string, summed: string[], cells: (from: string) => string | null, allCommon = false): string[] {
  const by = keys.join(', ');
  const measures = summed.map((m) => measureOf(m));
  const aggregates = measures.flatMap((m, j) => (allCommon ? [`count(${m})::DOUBLE AS c${j}`, laneSumSql(halvesSql(m, 'CAST'), j)] : laneSql(m, j)));
  const perRow = measures.map((m, j) => laneRowSql(m, j));
  const rows = allCommon ? 'r' : `(SELECT *, ${perRow.map((x) => x[1]).join(', ')} FROM (SELECT *, ${perRow.map((x) => x[0]).join(', ')} FROM r))`;
  const grouped = `SELECT ${[by, 'count(*)::DOUBLE AS n', ...statSql(shape, measureOf), ...aggregates].join(', ')} FROM ${rows} GROUP BY ${by}`;
  const celled = cells(`(${grouped})`);
  const { stats, merging } = keptStats(shape);
  // Raw grid cells turned into cells share keys and are merged; other groups are the keys' own,
  // and a second GROUP BY of them cost a fifth of an hourly × station statement.
  const merged = summed.flatMap((_, j) => [`sum(c${j}) AS c${j}`, `sum(h${j}) AS h${j}`, ...(allCommon ? [] : [`sum(d${j}) AS d${j}`, `flatten(list(v${j}) FILTER (WHERE v${j} IS NOT NULL)) AS v${j}`])]);
  const q = celled ? `SELECT ${[by, 'sum(n) AS n', ...merging, ...merged].join(', ')} FROM (${celled}) GROUP BY ${by}` : grouped;
  const lanes = summed.flatMap((_, j) => [`c${j}`, allCommon ? `0::DOUBLE AS f${j}` : `c${j} - d${j} AS f${j}`, ...totalSql(`h${j}`, j), ...(allCommon ? [] : [`v${j}`])]);
  return [`g AS (SELECT ${[...keys, 'n', ...stats.map((i) => `s${i}`), ...lanes].join(', ')} FROM (${q}))`];
}
