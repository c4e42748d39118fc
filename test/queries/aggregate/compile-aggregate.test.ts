import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import type { AggregateShape } from '../../../queries/aggregate/aggregate-shape.ts';
import { formatInstant } from '../../../queries/instant.ts';
import { aggregateColumns, compileAggregate, type FilesFacts } from '../../../queries/aggregate/compile-aggregate.ts';
import { chunkReader } from '../../../queries/aggregate/aggregate-rows.ts';
import { hotspot, tempDir } from '../../helpers/fixtures.ts';
import { exactMean, exactSum } from '../../helpers/exact.ts';
import { writeParquet } from '../../helpers/parquet.ts';
import { at, openFixtures, rows, spec } from '../sql/compile-fixtures.ts';

let instance: DuckDBInstance;
let c: DuckDBConnection;
let dataDir: string;
let files: string[];
beforeAll(async () => {
  const f = await openFixtures();
  ({ instance, c, dataDir } = f);
  files = f.files.hotspots!;
});
afterAll(() => instance.closeSync());

const shape = (over: Partial<AggregateShape> = {}): AggregateShape => ({ interval: 'all', keys: [], cellHundredths: null, stats: [{ name: 'count' }], ...over });
const window = { from: at('2025-08-01'), to: at('2025-08-03') };

/** `points` written to a file of their own in `dir`, and the groups the compiled statement of `s` gives over it (with its result, for its columns). */
async function groupsOf(dir: string, name: string, points: Parameters<typeof writeParquet>[2], s: AggregateShape, proven?: FilesFacts) {
  const file = path.join(dir, `hotspots/date=2025-08-01/${name}.parquet`);
  await writeParquet(file, hotspots, points);
  const query = { spec: spec(hotspots, dir), files: [file], window, shape: s, limit: 1000, facts: proven };
  const q = compileAggregate(query);
  const result = await c.run(q.sql, q.params);
  return { result, groups: chunkReader(result.columnNames(), s, aggregateColumns(query))(result.getChunk(0)) };
}

describe('the aggregate compiler', () => {
  it('binds the window, the filter values and the `all` bucket; identifiers come from the descriptor', async () => {
    const value = "'; DROP TABLE t; --";
    const q = compileAggregate({ spec: spec(hotspots, dataDir, { filters: [{ kind: 'equals', column: 'country', value }] }), files, window, shape: shape({ keys: [hotspots.aggregate!.keys[0]!] }), limit: 10 });
    expect(q.sql).not.toContain('DROP');
    expect(q.params).toEqual([String(window.from), '2025-08-01T00:00:00Z', '2025-08-03T00:00:00Z', value]);
    expect(q.sql).toContain('t."country" AS k0');
    expect(await rows(c, q)).toEqual([]);
  });

  it('asks for at most `limit` groups, ordered by bucket then keys with nulls last', async () => {
    const q = compileAggregate({ spec: spec(hotspots, dataDir), files, window, shape: shape({ interval: 'day', keys: [hotspots.aggregate!.keys[0]!] }), limit: 1000 });
    expect(q.sql).toMatch(/ORDER BY g\.b, g\.k0 ASC NULLS LAST LIMIT 1000$/);
    const got = (await rows(c, q)).map((r) => [r[0], r[1]]);
    const sorted = [...got].sort((a, b) => (a[0] !== b[0] ? (a[0]! < b[0]! ? -1 : 1) : a[1] === b[1] ? 0 : a[1] === null ? 1 : b[1] === null ? -1 : a[1]! < b[1]! ? -1 : 1));
    expect(got.length).toBeGreaterThan(1);
    expect(got).toEqual(sorted);
    expect(compileAggregate({ spec: spec(hotspots, dataDir), files, window, shape: shape(), limit: 1 }).sql).toMatch(/LIMIT 1$/);
  });

  it('sums through 128-bit integers only when a sum or mean is asked', () => {
    const plain = compileAggregate({ spec: spec(hotspots, dataDir), files, window, shape: shape({ stats: [{ name: 'count' }, { name: 'frp.max', column: 'frp', fn: 'max' }] }), limit: 1 });
    expect(plain.sql).not.toContain('HUGEINT');
    const summed = compileAggregate({ spec: spec(hotspots, dataDir), files, window, shape: shape({ stats: [{ name: 'count' }, { name: 'frp.mean', column: 'frp', fn: 'mean' }] }), limit: 1 });
    expect(summed.sql).toContain('::HUGEINT');
    expect(summed.sql).not.toMatch(/\bsum\(m0\)|\bavg\(/);
  });
});

describe('exact sums across the lanes', () => {
  // Values on both sides of lane edges (2^-15, 2^17, 2^49), far outside them, subnormal, and cancelling.
  // And values about where the engine parts the common lane from the others (3e-5, 131071.99997), 2^−16 and 2^27 (where its halves stop being exact), 1e-6.
  const VALUES = [2 ** -15, 2 ** -15 - 2 ** -68, 2 ** 17 - 2 ** -36, 2 ** 17, 2 ** 49 - 2 ** -3, -(2 ** 49), 0.1, -0.1, 7.3, -1e16, 1e16, 1e300, -1e300, 5e-324, 1e-310, -2.5e-300, 1e308, -12.5, 3.75,
    0.00003, 0.000030000000000000004, -0.000029999999999999997, 2 ** -16, -(2 ** -16 - 2 ** -69), 131071.99997, -131071.99997000001, 2 ** 27, 2 ** 27 - 2 ** -25, 1e-6, 0];
  const s = shape({ stats: [{ name: 'count' }, { name: 'frp.sum', column: 'frp', fn: 'sum' }, { name: 'frp.mean', column: 'frp', fn: 'mean' }] });

  it('gives the correctly rounded sum and mean of values in every lane, whichever lanes a group holds', async () => {
    const dir = await tempDir();
    // The whole set, each set that leaves one value out, and sets only outside and only inside the common lane.
    const sets = [VALUES, ...VALUES.map((_, skip) => VALUES.filter((_, i) => i !== skip)), [1e16, -2.5e-300, 2 ** 17, 1e300], [0.1, 0.2, 0.3, -7.3], [1e-6, 3e-7, -1.7e-7, 2.2e-6], [7e-7, 1.1e-7, 9.9e-7], [0.00003, 2 ** -16, 1e-5, 3.1e-5]];
    for (const [n, xs] of sets.entries()) {
      const [group] = (await groupsOf(dir, `s${n}`, xs.map((frp, i) => hotspot(`s${n}-${i}`, '2025-08-01T10:00:00Z', { frp })), s)).groups;
      expect(group!.values.slice(1)).toEqual([xs.length, exactSum(xs), exactMean(xs)]);
    }
  });

  it('rounds a common-lane total past 2^92 from its integer: its last bits decide, and two doubles would not hold them', async () => {
    // In units of 2^−68: 2^95 + 2^68 + 2^53 + 2^42 + 2. Past the last kept bit (2^43) lies 2^42 + 2: just over half, so the
    // sum rounds up; the total's upper part (h >> 40) as one double would lose its last 4, and the sum round down.
    const xs = [...Array.from({ length: 2048 }, () => 65536), 1 + 2 ** -26, 2 ** -15 + 2 ** -67];
    const dir = await tempDir();
    for (const [n, sign] of [1, -1].entries()) {
      const values = xs.map((x) => sign * x);
      const [group] = (await groupsOf(dir, `big${n}`, values.map((frp, i) => hotspot(`b${n}-${i}`, '2025-08-01T10:00:00Z', { frp })), s)).groups;
      expect(exactSum(values)).not.toBe(sign * (2048 * 65536 + 1 + 2 ** -26));
      expect(group!.values.slice(1)).toEqual([values.length, exactSum(values), exactMean(values)]);
    }
  });
});

describe('exact sums at the edges of the paired total', () => {
  it('sends a common total just below 2^92 (of either sign, to −2^52 × 2^40) as a pair, and 2^92 as an integer, each exactly', async () => {
    const s = shape({ keys: [hotspots.aggregate!.keys[0]!], stats: [{ name: 'count' }, { name: 'frp.sum', column: 'frp', fn: 'sum' }, { name: 'frp.mean', column: 'frp', fn: 'mean' }] });
    // In units of 2^−68: 256 × 2^16 is 2^92; one of them 2^−36 less makes 2^92 − 2^32.
    const below = [...Array.from({ length: 255 }, () => 65536), 65536 - 2 ** -36];
    const at92 = Array.from({ length: 256 }, () => 65536);
    const groups: Record<string, number[]> = { AA: below, BB: below.map((x) => -x), CC: at92, DD: at92.map((x) => -x) };
    const points = Object.entries(groups).flatMap(([country, xs]) => xs.map((frp, i) => hotspot(`${country}${i}`, '2025-08-01T10:00:00Z', { country, frp })));
    const { result, groups: got } = await groupsOf(await tempDir(), 'edge', points, s);
    const rowsOf = await result.getRowObjects();
    // The engine's total in three exact parts, w × 2^80 + t × 2^40 + u (t, u of 40 bits): read as a pair of doubles below 2^92.
    const parts = rowsOf.map((r) => [r.k0, BigInt(r.w0 as number) * 2n ** 80n + BigInt(r.t0 as number) * 2n ** 40n + BigInt(r.u0 as number), [r.t0, r.u0].every((x) => (x as number) >= 0 && (x as number) < 2 ** 40)]);
    expect(parts).toEqual([['AA', 2n ** 92n - 2n ** 32n, true], ['BB', -(2n ** 92n) + 2n ** 32n, true], ['CC', 2n ** 92n, true], ['DD', -(2n ** 92n), true]]);
    expect(got.map((g) => g.values.slice(1))).toEqual(Object.entries(groups).map(([country, xs]) => [country, xs.length, exactSum(xs), exactMean(xs)]));
  });

  it('merges grid cells made of several raw ones (a point on 180°, on 90°) before it decides: rare values, a NaN, a total past 2^92 in one of them only', async () => {
    const s = shape({ keys: [hotspots.aggregate!.keys.find((k) => k.kind === 'grid')!], cellHundredths: 100, stats: [{ name: 'count' }, { name: 'frp.sum', column: 'frp', fn: 'sum' }, { name: 'frp.mean', column: 'frp', fn: 'mean' }] });
    // Each cell: points inside it and on its north or east edge (the last cell's), each side its own raw cell.
    const cells: [number, number, (number | string)[], (number | string)[]][] = [
      [179.5, 10.5, [1e-7, 2.5], [7.3]],
      [0.5, 89.5, ['NaN'], [1]],
      [179.5, 20.5, Array.from({ length: 200 }, () => 65536), Array.from({ length: 100 }, () => 65536.5)],
      [179.5, 30.5, [0.1, 0.2], [0.3]],
    ];
    const points = cells.flatMap(([lon, lat, inside, edge], n) => [
      ...inside.map((frp, i) => hotspot(`c${n}-in-${i}`, '2025-08-01T10:00:00Z', { longitude: lon, latitude: lat, frp })),
      ...edge.map((frp, i) => hotspot(`c${n}-edge-${i}`, '2025-08-01T10:00:00Z', lon === 179.5 ? { longitude: 180, latitude: lat, frp } : { longitude: lon, latitude: 90, frp })),
    ]);
    const got = (await groupsOf(await tempDir(), 'cells', points, s)).groups.map((g) => g.values.slice(1));
    const want = cells.map(([lon, lat, inside, edge]) => {
      const xs = [...inside, ...edge].map(Number);
      const finite = xs.every(Number.isFinite);
      return [Math.floor(lon), Math.floor(lat), xs.length, finite ? exactSum(xs) : null, finite ? exactMean(xs) : null];
    });
    const order = (a: unknown[], b: unknown[]) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number);
    expect(got).toEqual([...want].sort(order));
  });
});

describe('sums over values that are not numbers', () => {
  it('counts them, and gives no sum or mean where one is among the values; zeros add nothing', async () => {
    const s = shape({ keys: [hotspots.aggregate!.keys[0]!], stats: [{ name: 'count' }, { name: 'frp.count', column: 'frp', fn: 'count' }, { name: 'frp.sum', column: 'frp', fn: 'sum' }, { name: 'frp.mean', column: 'frp', fn: 'mean' }] });
    const groups: Record<string, (number | string | null)[]> = { AA: ['NaN', 1.5, 1e-6], BB: ['Infinity', '-Infinity', 2.5], CC: ['-0.0', 0, null], DD: [1e300, '-Infinity'], EE: ['-Infinity', 3] };
    const points = Object.entries(groups).flatMap(([country, xs]) => xs.map((frp, i) => hotspot(`${country}${i}`, '2025-08-01T10:00:00Z', { country, frp: typeof frp === 'number' ? String(frp) : frp })));
    const got = (await groupsOf(await tempDir(), 'a', points, s)).groups.map((g) => g.values.slice(1));
    expect(got).toEqual([['AA', 3, 3, null, null], ['BB', 3, 3, null, null], ['CC', 3, 2, 0, 0], ['DD', 2, 2, null, null], ['EE', 2, 2, null, null]]);
  });
});

describe('calendar buckets', () => {
  const US_PER_MS = 1000n;
  /** The UTC start of the month or year holding t, by the JavaScript calendar (years 0–99 as years). */
  function floorOf(t: bigint, interval: 'hour' | 'day' | 'week' | 'month' | 'year'): bigint {
    if (interval === 'hour' || interval === 'day') {
      const size = interval === 'hour' ? 3_600_000_000n : 86_400_000_000n;
      return t - (((t % size) + size) % size);
    }
    if (interval === 'week') {
      // ISO weeks start on Monday (getUTCDay 1).
      const day = floorOf(t, 'day');
      return day - BigInt((new Date(Number(day / US_PER_MS)).getUTCDay() + 6) % 7) * 86_400_000_000n;
    }
    const d = new Date(Number((t - (((t % US_PER_MS) + US_PER_MS) % US_PER_MS)) / US_PER_MS));
    const start = new Date(0);
    start.setUTCFullYear(d.getUTCFullYear(), interval === 'month' ? d.getUTCMonth() : 0, 1);
    return BigInt(start.getTime()) * US_PER_MS;
  }
  // Week, day and hour starts about the epoch; month starts around leap days (2024, 2000, 1900, 2100), the epoch, before it, and years 1–99; each, a microsecond before and after.
  const STARTS = ['1969-11-24', '1969-12-29', '1970-01-05', '1969-12-31T23:00:00Z', '1970-01-01T01:00:00Z', '0001-01-01', '0004-02-01', '0004-03-01', '0099-12-01', '0100-01-01', '1900-03-01', '1969-12-01', '1970-01-01', '2000-02-01', '2000-03-01', '2024-02-01', '2024-03-01', '2025-01-01', '2100-03-01'];
  const times = STARTS.map(at).flatMap((t) => [t, t - 1n, t + 1n, t + 86_400_000_000n * 28n]).filter((t) => t >= at('0001-01-01'));

  it.each([
    ['month', '0001-01-01', '2101-01-01'],
    ['year', '0001-01-01', '2101-01-01'],
    ['month', '2023-11-15T12:00:00Z', '2025-01-01'],
    ['year', '1969-06-01', '2025-02-10'],
    ['week', '1969-11-20T13:00:00Z', '1970-01-15'],
    ['day', '1969-12-31T13:00:00Z', '1970-01-02T00:00:00.000001Z'],
    ['hour', '1969-12-31T23:30:00Z', '1970-01-01T01:00:00Z'],
  ] as const)('labels each row with the UTC start of its %s, window [%s, %s)', async (interval, fromText, toText) => {
    const [from, to] = [at(fromText), at(toText)];
    const dir = await tempDir();
    const file = path.join(dir, 'hotspots/date=2025-08-01/a.parquet');
    await writeParquet(file, hotspots, times.map((t, i) => hotspot(`t${i}`, formatInstant(t))));
    const s = shape({ interval });
    const query = { spec: spec(hotspots, dir), files: [file], window: { from, to }, shape: s, limit: 100_000 };
    const expected = new Map<bigint, number>();
    for (const t of times.filter((t) => t >= from && t < to)) expected.set(floorOf(t, interval), (expected.get(floorOf(t, interval)) ?? 0) + 1);
    const q = compileAggregate(query);
    const result = await c.run(q.sql, q.params);
    const got = new Map(chunkReader(result.columnNames(), s, aggregateColumns(query))(result.getChunk(0)).map((g) => [g.values[0] as bigint, g.values[1] as number]));
    expect(got).toEqual(expected);
    expect(got.size).toBeGreaterThan(1);
  });

  it('compares with the window\'s own bucket starts when they are few, and uses the calendar when they are many', () => {
    const few = compileAggregate({ spec: spec(hotspots, dataDir), files, window, shape: shape({ interval: 'month' }), limit: 1 });
    expect(few.sql).not.toContain('date_trunc');
    const many = compileAggregate({ spec: spec(hotspots, dataDir), files, window: { from: at('0001-01-01'), to: at('2101-01-01') }, shape: shape({ interval: 'month' }), limit: 1 });
    expect(many.sql).toContain('date_trunc');
  });
});

describe('with the files\' facts known (FileFacts: no per-row test)', () => {
  const KNOWN: FilesFacts = { common: new Set(hotspots.aggregate!.measures), inGrid: true };
  const grid = hotspots.aggregate!.keys.find((k) => k.kind === 'grid')!;
  const country = hotspots.aggregate!.keys[0]!;
  const summed = (keys: AggregateShape['keys'] = [], cellHundredths: number | null = null) =>
    shape({ keys, cellHundredths, stats: [{ name: 'count' }, { name: 'frp.sum', column: 'frp', fn: 'sum' }, { name: 'frp.mean', column: 'frp', fn: 'mean' }, { name: 'frp.max', column: 'frp', fn: 'max' }, { name: 'frp.count', column: 'frp', fn: 'count' }] });
  /** The groups with facts known and without, which must be the same; and the statement with them, which must skip the tests. */
  async function both(name: string, points: Parameters<typeof writeParquet>[2], s: AggregateShape) {
    const dir = await tempDir();
    const known = await groupsOf(dir, `${name}-known`, points, s, KNOWN);
    const tested = await groupsOf(dir, `${name}-tested`, points, s);
    expect(known.groups).toEqual(tested.groups);
    return known.groups.map((g) => g.values.slice(1));
  }

  it('skips the lane test, the rare values and the non-finite count, and the grid\'s test beyond 180 and 90', () => {
    const q = (s: AggregateShape, proven?: FilesFacts) => compileAggregate({ spec: spec(hotspots, dataDir), files, window, shape: s, limit: 10, facts: proven }).sql;
    expect(q(summed())).toContain('65535.99997');
    expect(q(summed(), KNOWN)).not.toMatch(/65535\.99997|list\(|TRY_CAST|unnest/);
    expect(q(summed(), { ...KNOWN, common: new Set(['brightness']) })).toContain('65535.99997');
    expect(q(summed([grid], 25))).toMatch(/vx > 180/);
    expect(q(summed([grid], 25), KNOWN)).not.toMatch(/vx > 180|vy > 90/);
    // A corrected series' values are not the stored ones the facts are of (hotspots have none; the rule is the compiler's).
    expect(compileAggregate({ spec: spec(hotspots, dataDir, { correction: { id: 'm', hash: 'h' } as never }), files, window, shape: summed(), limit: 10, facts: KNOWN }).sql).toContain('65535.99997');
  });

  it('gives the same exact sums and means of common values (zeros, the lane\'s edges, negatives) and nulls, grouped or not', async () => {
    // Every value one the file check would find common (commonSql): zero, or about 3e-5 to 131072 in magnitude.
    const xs = [0.1, 0.2, 0.3, -7.3, 0, -0, 2 ** -15, 131071.99996, -131071.99996, 12.5, null, 3.75, 0.0000306];
    const points = xs.flatMap((frp, i) => [hotspot(`a${i}`, '2025-08-01T10:00:00Z', { frp, country: 'AA' }), hotspot(`b${i}`, '2025-08-02T11:00:00Z', { frp: frp === null ? null : -frp, country: i % 3 ? 'BB' : null })]);
    expect(await both('plain', points, summed())).toHaveLength(1);
    const byDay = await both('by-day', points, { ...summed([country]), interval: 'day' });
    const finite = (v: (number | null)[]) => v.filter((x): x is number => x !== null);
    const bb = finite(xs.map((x, i) => (i % 3 && x !== null ? -x : null)));
    expect(byDay.find((g) => g[0] === 'BB')).toEqual(['BB', xs.filter((_, i) => i % 3).length, exactSum(bb), exactMean(bb), Math.max(...bb), bb.length]);
  });

  it('lists a common total of 2^92 or more, of either sign, and rounds it exactly', async () => {
    const xs = [...Array.from({ length: 2048 }, () => 65536), 1 + 2 ** -26, 2 ** -15 + 2 ** -67];
    const points = [1, -1].flatMap((sign, n) => xs.map((x, i) => hotspot(`b${n}-${i}`, '2025-08-01T10:00:00Z', { country: n ? 'NN' : 'PP', frp: sign * x })));
    const got = await both('large', points, summed([country]));
    expect(got).toEqual([1, -1].map((sign) => [sign < 0 ? 'NN' : 'PP', xs.length, exactSum(xs.map((x) => sign * x)), exactMean(xs.map((x) => sign * x)), sign < 0 ? -(2 ** -15 + 2 ** -67) : 65536, xs.length]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))));
  });

  it.each([25, 100, 10, 1])('puts positions on every edge in their cells at %i hundredths of a degree, sums merged from raw cells', async (hundredths) => {
    const size = hundredths / 100;
    const edges = [-180, -180 + size, -size, 0, size, 180 - size, 180];
    const lats = [-90, -90 + size, 0, 90 - size, 90];
    const points = edges.flatMap((longitude, i) => lats.map((latitude, j) => hotspot(`e${i}-${j}`, '2025-08-01T10:00:00Z', { longitude, latitude, frp: 1 + i + j / 8 })));
    const got = await both(`edges${hundredths}`, points, summed([grid], hundredths));
    expect(got.reduce((n, g) => n + (g[2] as number), 0)).toBe(points.length);
    // 180 and 90 share the last cells with the positions a size before them: the north-east cell holds four.
    const last = got.reduce((a, g) => ((g[0] as number) >= (a[0] as number) && (g[1] as number) >= (a[1] as number) ? g : a));
    expect([last[0], last[1], last[2]]).toEqual([(36000 - hundredths - 18000) / 100, (18000 - hundredths - 9000) / 100, 4]);
  });
});
