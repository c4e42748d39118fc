import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import type { Sources } from '../../../queries/sources/preflight.ts';
import { formatInstant } from '../../../queries/instant.ts';
import type { AggregateShape, Interval } from '../../../queries/aggregate/aggregate-shape.ts';
import { aggregateColumns, compileAggregate } from '../../../queries/aggregate/compile-aggregate.ts';
import { resultGroups } from '../../../queries/aggregate/aggregate-groups.ts';
import { mergedGroups } from '../../../queries/aggregate/aggregate-merge.ts';
import { chunkReader, type AggregateRow } from '../../../queries/aggregate/aggregate-rows.ts';
import { filesIn, mergedSlices } from '../../../queries/aggregate/aggregate-slices.ts';
import type { Window } from '../../../queries/window.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { at, openDuck, spec } from '../sql/compile-fixtures.ts';

const DAYS = ['01', '02', '03', '04'];
const ROWS = 2000;
const DAY = 86_400_000_000n;

let instance: DuckDBInstance;
let c: DuckDBConnection;
let dataDir: string;
let sources: Sources;

/**
 * Four days of detections. Countries PT, ES and null every day; '𝔸' (past U+FFFF) on the first
 * two days only and 'ﬀ' (U+FB00, which DuckDB orders before it, UTF-16 after) on the last two;
 * 'NX' on the first two days, its FRP NaN on the first. FRP fractional with one 2^53 a country on the first day,
 * so that a part's sum rounded to a double loses what the other parts' rows add; scan in many
 * exponents (the groups' rare values), cancelling.
 */
beforeAll(async () => {
  ({ instance, c } = await openDuck());
  dataDir = await tempDir();
  const partitions = [];
  for (const [d, day] of DAYS.entries()) {
    const file = path.join(dataDir, `hotspots/date=2025-07-${day}/a.parquet`);
    await mkdir(path.dirname(file), { recursive: true });
    const t = `(TIMESTAMPTZ '2025-07-${day} 00:00:00+00' + to_seconds((i * 43) % 86400))`;
    const country = `CASE i % 6 WHEN 0 THEN 'PT' WHEN 1 THEN 'ES' WHEN 2 THEN NULL WHEN 3 THEN '${d < 2 ? '𝔸' : 'ﬀ'}' WHEN 4 THEN ${d < 2 ? "'NX'" : "'PT'"} ELSE 'ES' END`;
    const frp = `CASE WHEN i % 6 = 4 AND ${d} = 0 THEN 'NaN'::DOUBLE WHEN i < 6 AND ${d} = 0 THEN 9007199254740992.0 ELSE ((hash(i * ${d + 3}) % 100000) / 1000.0 + 0.1)::DOUBLE END`;
    const scan = `[1e-6, 3e20, -3e20, 0.39, 5e-324, 1e300, -1e300, 2.5e-9][i % 8 + 1]::DOUBLE`;
    await c.run(`COPY (SELECT printf('${day}-%06d', i) AS id, 'VIIRS_SNPP_NRT' AS product, ${t} AS "acquiredAtUtc", ${country} AS country,
      (36.0 + (hash(i) % 3000) / 1000.0)::DOUBLE AS latitude, (-9.5 + (hash(i * 7) % 3000) / 1000.0)::DOUBLE AS longitude,
      NULL::DOUBLE AS brightness, NULL::DOUBLE AS bright_t31, 330.0::DOUBLE AS bright_ti4, 290.1::DOUBLE AS bright_ti5, ${scan} AS scan, 0.36::DOUBLE AS track,
      '2025-07-${day}' AS acq_date, '0000' AS acq_time, 'N' AS satellite, 'VIIRS' AS instrument, 'n' AS confidence, '2.0NRT' AS version,
      ${frp} AS frp, 'D' AS daynight, NULL::INTEGER AS type FROM range(${ROWS}) r(i)) TO '${file}' (FORMAT parquet)`);
    const start = at(`2025-07-${day}`);
    partitions.push({ key: `2025-07-${day}`, start, end: start + DAY, files: [{ path: file, size: 1, mtimeMs: 1 }] });
  }
  sources = { partitions, fileRows: ROWS * DAYS.length, rowsByFile: new Map(partitions.map((p) => [p.files[0]!.path, ROWS])) } as unknown as Sources;
}, 60_000);
afterAll(() => instance?.closeSync());

const STATS = ['count', 'frp.count', 'frp.sum', 'frp.mean', 'frp.min', 'frp.max', 'scan.sum', 'scan.mean'].map((name) => {
  const [column, fn] = name.split('.');
  return fn ? { name, column: column!, fn } : { name };
});
const shapeOf = (interval: Interval, keys: string[], cell: number | null = null): AggregateShape =>
  ({ interval, keys: keys.map((k) => hotspots.aggregate!.keys.find((x) => x.name === k)!), cellHundredths: cell, stats: STATS }) as AggregateShape;

/** The groups of one statement over `w`, or of each part's statement over `windows`. */
async function results(shape: AggregateShape, windows: readonly Window[], labels: Window, most: number) {
  const out = [];
  for (const w of windows) {
    const q = compileAggregate({ spec: spec(hotspots, dataDir), files: filesIn(sources, w), window: w, labels, shape, limit: most + 1 });
    out.push(await c.run(q.sql, q.params));
  }
  return out;
}

const rowsOf = (g: { batches(): Iterable<AggregateRow[]> }) => [...g.batches()].flat();

/** The window as one statement and as `n` parts cut inside its buckets, merged: the two answers and each part's own groups. */
async function bothWays(w: Window, interval: Interval, keys: string[], n: number, limit = 1000, cell: number | null = null) {
  const shape = shapeOf(interval, keys, cell);
  const cols = aggregateColumns({ spec: spec(hotspots, dataDir), shape });
  const parts = mergedSlices(w, sources, n, interval)!;
  expect(parts).toHaveLength(n);
  const [one] = await results(shape, [w], w, limit);
  const each = await results(shape, parts, w, limit);
  const read = chunkReader(one!.columnNames(), shape, cols);
  const single = resultGroups([one!], limit, w, read);
  const merged = mergedGroups(each, { shape, cols, window: w, rowLimit: limit, most: limit })!;
  const own = each.map((r) => rowsOf(resultGroups([r], limit, w, read)));
  return { single, merged, own, parts };
}

const WHOLE = { from: at('2025-07-01T05:00:00Z'), to: at('2025-07-04T20:00:00Z') };

describe('a window cut inside its buckets, its parts merged', () => {
  it('gives the one statement’s groups exactly, where the parts share every group and their sums rounded apart would differ', async () => {
    const { single, merged, own, parts } = await bothWays(WHOLE, 'all', ['country'], 3);
    expect(parts.some((p) => p.from % DAY !== 0n)).toBe(true);
    const rows = rowsOf(merged);
    expect(rows).toEqual(rowsOf(single));
    expect([merged.returned, merged.truncated, merged.next]).toEqual([single.returned, false, null]);
    expect(rows.map((r) => r.values[1])).toEqual(['ES', 'NX', 'PT', 'ﬀ', '𝔸', null]);
    // Every part holds PT, ES and the null country: the same groups, merged.
    for (const part of own) expect(part.map((r) => r.values[1])).toEqual(expect.arrayContaining(['ES', 'PT', null]));
    // The parts' sums rounded each and then added are not the exact sums: only the exact totals' merge gives these.
    const sumAt = 1 + 1 + STATS.findIndex((s) => s.name === 'frp.sum');
    const naive = rows.map((r) => own.reduce((t, part) => t + ((part.find((x) => x.values[1] === r.values[1])?.values[sumAt] as number | undefined) ?? 0), 0));
    expect(naive.filter((x, i) => x !== rows[i]!.values[sumAt])).not.toHaveLength(0);
    // NX: NaN on the first day, finite values on the second: its minimum is a finite one, its maximum, sum and mean not finite.
    const nx = rows.find((r) => r.values[1] === 'NX')!.values;
    expect(nx.slice(3, 8)).toEqual([nx[2], null, null, expect.any(Number), null]);
  });

  // In eight parts the first holds only NX's NaN values, which DuckDB orders above every number: its minimum is another part's.
  it('as one statement for a year, a week and days fewer than the parts, with a grid, and cut past the row limit', async () => {
    const cases: [Interval, string[], number][] = [['year', ['country'], 2], ['week', ['country', 'daynight'], 4], ['day', ['country'], 8], ['all', ['grid'], 3], ['all', ['country'], 8]];
    for (const [interval, keys, n] of cases) {
      const { single, merged } = await bothWays(WHOLE, interval, keys, n, 1000, keys.includes('grid') ? 25 : null);
      expect(rowsOf(merged)).toEqual(rowsOf(single));
      expect(merged.returned).toBeGreaterThan(4);
    }
    // A limit inside the one bucket: cut there, no next; inside the third day (5 groups on each of the first two), cut before it.
    const inAll = await bothWays(WHOLE, 'all', ['grid'], 3, 50, 25);
    expect([inAll.merged.returned, inAll.merged.truncated, inAll.merged.next]).toEqual([50, true, null]);
    expect(rowsOf(inAll.merged)).toEqual(rowsOf(inAll.single));
    const inDays = await bothWays(WHOLE, 'day', ['country'], 8, 12);
    expect([inDays.merged.returned, inDays.merged.truncated, formatInstant(inDays.merged.next!.from)]).toEqual([10, true, '2025-07-03T00:00:00Z']);
    expect(rowsOf(inDays.merged)).toEqual(rowsOf(inDays.single));
  });

  it('gives up (null) when the merge has more groups than it was asked to hold, short of the row limit', async () => {
    const shape = shapeOf('all', ['grid'], 25);
    const cols = aggregateColumns({ spec: spec(hotspots, dataDir), shape });
    const each = await results(shape, mergedSlices(WHOLE, sources, 3, 'all')!, WHOLE, 20);
    expect(mergedGroups(each, { shape, cols, window: WHOLE, rowLimit: 1000, most: 20 })).toBeNull();
  });
});
