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
 * are kept per group, summed per lane afterwards, for exact-sum.ts to add. Null, zero and
 * non-finite values add nothing. COMMON_LANE is that lane's e: a paired total t × 2^40 + u
 * (pairSql) is in units of 2^(COMMON_LANE − 52).
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

/** Totals of at least 2^92 in magnitude are sent in limbs (t stays a double exactly a little further, to 2^93: a bound with room). */
const PAIR_BELOW = '(1::HUGEINT << 92)';
/**
 * A common lane's total h (HUGEINT, or null) as two exact doubles: t = h >> 40 (a shift rounds
 * down) and u = its low 40 bits (never negative), h = t × 2^40 + u. Bit operations: a 128-bit
 * division cost more than the rest of the statement's last step.
 */
const pairSql = (h: string, j: number): [string, string] => [`CAST(${h} >> 40 AS DOUBLE) AS t${j}`, `CAST(${h} & 1099511627775 AS DOUBLE) AS u${j}`];

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

/** The rare values, one row each from p's lists, with their measure (j) and lane (l). */
function rareSql(by: string, measures: string[]): string {
  const rare = measures.map((_, j) => `SELECT ${by}, ${j} AS j, unnest(v${j}) AS x FROM p WHERE v${j} IS NOT NULL`).join(' UNION ALL ');
  return `SELECT *, ${exponentSql('x')} AS l FROM (${rare})`;
}

/**
 * Summed measures. The rows are grouped by the keys once (p: through `cells` when a grid's raw
 * cells are turned into cells, then merged in q), the non-finite values counted there (c − d).
 * The rare values (rareSql) are summed per lane and listed, one `j:e:m` item per lane (o: at most
 * ~68 per measure).
 * Per measure j: counts, the common lane's sum as two doubles (t, u: pairSql), or, for a group
 * with values in other lanes or a total too large for a pair, every lane in `limbs` (the common one
 * among them); exact-sum.ts adds them exactly and rounds once.
 */
export function summedGroupsSql(keys: string[], shape: Stats, measureOf: (column: string) => string, summed: string[], cells: (from: string) => string | null, allCommon = false): string[] {
  if (allCommon) return commonGroupsSql(keys, shape, measureOf, summed, cells);
  const by = keys.join(', ');
  const measures = summed.map((m) => measureOf(m));
  const aggregates = measures.flatMap((m, j) => laneSql(m, j));
  const perRow = measures.map((m, j) => laneRowSql(m, j));
  const rows = `(SELECT *, ${perRow.map((x) => x[1]).join(', ')} FROM (SELECT *, ${perRow.map((x) => x[0]).join(', ')} FROM r))`;
  const grouped = `SELECT ${[by, 'count(*)::DOUBLE AS n', ...statSql(shape, measureOf), ...aggregates].join(', ')} FROM ${rows} GROUP BY ${by}`;
  const celled = cells(`(${grouped})`);
  const p = `p AS (${celled ?? grouped})`;
  const lanes = `SELECT ${by}, j, l, sum(${mantissaSql('x', 'l')}) AS o FROM (${rareSql(by, measures)}) GROUP BY ${by}, j, l`;
  const perLane = summed.map((_, j) => `string_agg(concat(j, ':', l, ':', o), ' ') FILTER (WHERE j = ${j}) AS o${j}`);
  const o = `o AS (SELECT ${[by, ...perLane].join(', ')} FROM (${lanes}) GROUP BY ${by})`;
  // Raw grid cells turned into cells share keys and are merged; other groups of p are the keys'
  // own, and a second GROUP BY of them cost a fifth of an hourly × station statement.
  const { stats, merging } = keptStats(shape);
  const laneCols = summed.flatMap((_, j) => [`c${j}`, `d${j}`, `h${j}`]);
  const statCols = stats.map((i) => `s${i}`);
  // Merged from raw cells, q is read by both branches of g: grouped once.
  const q = celled
    ? `q AS MATERIALIZED (SELECT ${[by, 'sum(n) AS n', ...merging, ...laneCols.map((x) => `sum(${x}) AS ${x}`), ...summed.map((_, j) => `bool_or(v${j} IS NOT NULL) AS e${j}`)].join(', ')} FROM p GROUP BY ${by})`
    : `q AS (SELECT ${[by, 'n', ...statCols, ...laneCols, ...summed.map((_, j) => `v${j} IS NOT NULL AS e${j}`)].join(', ')} FROM p)`;
  const same = keys.map((k) => `q.${k} IS NOT DISTINCT FROM o.${k}`).join(' AND ');
  // Lane j in limbs: rare values beside it, or a common total too large to send as a pair.
  const listed = (j: number) => `(o${j} IS NOT NULL OR coalesce(abs(h${j}) >= ${PAIR_BELOW}, false))`;
  const lanesOut = summed.flatMap((_, j) => [`c${j}`, `c${j} - d${j} AS f${j}`, ...pairSql(`CASE WHEN NOT ${listed(j)} THEN h${j} END`, j)]);
  const items = summed.map((_, j) => `CASE WHEN ${listed(j)} THEN concat_ws(' ', CASE WHEN h${j} IS NOT NULL THEN concat(${j}, ':${COMMON_LANE}:', h${j}) END, o${j}) END`);
  const list = `CASE WHEN ${summed.map((_, j) => listed(j)).join(' OR ')} THEN concat_ws(' ', ${items.join(', ')}) END AS limbs`;
  const common = summed.flatMap((_, j) => [`c${j}`, `0::DOUBLE AS f${j}`, ...pairSql(`h${j}`, j)]);
  const head = [...keys.map((k) => `q.${k}`), 'n', ...stats.map((i) => `s${i}`)];
  // Groups without a rare value and totals small enough for a pair (nearly all) are not joined with
  // o: a join of every group, with o empty as it nearly always is, cost a quarter of an hourly ×
  // station statement.
  // e: the group has rare values; c − d: it has non-finite ones.
  const plain = summed.map((_, j) => `NOT e${j} AND c${j} = d${j} AND coalesce(abs(h${j}) < ${PAIR_BELOW}, true)`).join(' AND ');
  const g = `g AS (SELECT ${[...head, ...common, 'NULL::VARCHAR AS limbs'].join(', ')} FROM q WHERE ${plain} UNION ALL SELECT ${[...head, ...lanesOut, list].join(', ')} FROM (SELECT * FROM q WHERE NOT (${plain})) AS q LEFT JOIN o ON ${same})`;
  return [p, o, q, g];
}

/**
 * Summed measures whose every value in the files read is known to be zero or in the common lane
 * (FileFacts.common; null values aside): no per-row test, no rare values and no non-finite ones,
 * so each group is one pass over its rows (p; through `cells` and merged in q for a grid), its
 * common lane summed as two 64-bit halves (exact: see laneSql) and paired as the other way pairs
 * it (the same columns, the same bytes), a total of 2^92 or more in `limbs`.
 */
function commonGroupsSql(keys: string[], shape: Stats, measureOf: (column: string) => string, summed: string[], cells: (from: string) => string | null): string[] {
  const by = keys.join(', ');
  const measures = summed.map((m) => measureOf(m));
  const lanes = measures.flatMap((x, j) => [`count(${x})::DOUBLE AS c${j}`, laneSumSql(halvesSql(x, 'CAST'), j)]);
  const grouped = `SELECT ${[by, 'count(*)::DOUBLE AS n', ...statSql(shape, measureOf), ...lanes].join(', ')} FROM r GROUP BY ${by}`;
  const celled = cells(`(${grouped})`);
  const { stats, merging } = keptStats(shape);
  const q = celled ? `SELECT ${[by, 'sum(n) AS n', ...merging, ...summed.flatMap((_, j) => [`sum(c${j}) AS c${j}`, `sum(h${j}) AS h${j}`])].join(', ')} FROM (${celled}) GROUP BY ${by}` : grouped;
  const large = (j: number) => `coalesce(abs(h${j}) >= ${PAIR_BELOW}, false)`;
  const lanesOut = summed.flatMap((_, j) => [`c${j}`, `0::DOUBLE AS f${j}`, ...pairSql(`CASE WHEN NOT ${large(j)} THEN h${j} END`, j)]);
  const items = summed.map((_, j) => `CASE WHEN ${large(j)} THEN concat(${j}, ':${COMMON_LANE}:', h${j}) END`);
  const limbs = `CASE WHEN ${summed.map((_, j) => large(j)).join(' OR ')} THEN concat_ws(' ', ${items.join(', ')}) END AS limbs`;
  const head = [...keys, 'n', ...stats.map((i) => `s${i}`)];
  return [`g AS (SELECT ${[...head, ...lanesOut, limbs].join(', ')} FROM (${q}))`];
}
