import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { aggregateColumns, compileAggregate } from '../../../queries/aggregate/compile-aggregate.ts';
import { hotspot, tempDir, writeChain } from '../../helpers/fixtures.ts';
import { writeParquet } from '../../helpers/parquet.ts';
import { exactMean, exactSum } from '../../helpers/exact.ts';
import { CHAIN, parseCsv } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { at, spec } from '../../queries/sql/compile-fixtures.ts';

/**
 * Groups whose values mostly lie outside the common lane (fire-danger indices near zero, tiny
 * FRP): the engine lists a group's rare values, and they are added exactly outside it.
 */

const ROWS = 262_144;
/** By row index mod 16: mostly 1e-6, and values of every other lane, huge ones cancelling. */
const valueOf = (i: number): number => {
  const k = i % 16;
  if (k < 10) return 1e-6;
  return [3.7e-9, -2.5e-5, 1.5, i % 32 === 13 ? 6.02e23 : -6.02e23, 1e-300, 5e-324][k - 10]!;
};
const countryOf = (i: number) => (i % 2 ? 'PT' : 'ES');

let server: TestServer;
let file: string;
let dir: string;
beforeAll(async () => {
  dir = await tempDir();
  file = path.join(dir, 'hotspots/date=2025-08-01/a.parquet');
  await mkdir(path.dirname(file), { recursive: true });
  const c = await (await DuckDBInstance.create(':memory:')).connect();
  const lanes = `[1e-6::DOUBLE, 3.7e-9::DOUBLE, -2.5e-5::DOUBLE, 1.5::DOUBLE, 6.02e23::DOUBLE, -6.02e23::DOUBLE, 1e-300::DOUBLE, 5e-324::DOUBLE]`;
  const pick = `CASE WHEN i % 16 < 10 THEN 1 WHEN i % 16 = 13 THEN CASE WHEN i % 32 = 13 THEN 5 ELSE 6 END WHEN i % 16 > 13 THEN i % 16 - 7 ELSE i % 16 - 8 END`;
  await c.run(`COPY (SELECT printf('x-%08d', i) AS id, 'VIIRS_SNPP_NRT' AS product, TIMESTAMPTZ '2025-08-01 12:00:00+00' AS "acquiredAtUtc", CASE WHEN i % 2 = 1 THEN 'PT' ELSE 'ES' END AS country,
    0.5::DOUBLE AS latitude, 0.5::DOUBLE AS longitude, CAST(NULL AS DOUBLE) AS brightness, CAST(NULL AS DOUBLE) AS bright_t31, 330.0::DOUBLE AS bright_ti4, 290.5::DOUBLE AS bright_ti5,
    0.39::DOUBLE AS scan, 0.36::DOUBLE AS track, '2025-08-01' AS acq_date, '1200' AS acq_time, 'N' AS satellite, 'VIIRS' AS instrument, 'n' AS confidence, '2.0NRT' AS version,
    ${lanes}[${pick}] AS frp, 'D' AS daynight, CAST(NULL AS INTEGER) AS type FROM range(${ROWS}) r(i)) TO '${file}' (FORMAT parquet)`);
  c.closeSync();
  // A sum past the largest double and a mean below the smallest, negative.
  const at = '2025-08-05T12:00:00Z';
  await writeParquet(path.join(dir, 'hotspots/date=2025-08-05/a.parquet'), hotspots, [
    hotspot('huge-1', at, { country: 'HI', frp: 1.7e308 }),
    hotspot('huge-2', at, { country: 'HI', frp: 1.7e308 }),
    hotspot('tiny-1', at, { country: 'LO', frp: -5e-324 }),
    hotspot('tiny-2', at, { country: 'LO', frp: 0 }),
  ]);
  await writeChain(dir, 'hotspots', CHAIN);
  server = await startServer(dir, { AGGREGATE_CACHE_MB: '0' });
}, 60_000);
afterAll(() => server?.close());

const ARROW = 'application/vnd.apache.arrow.stream';

describe('groups of values outside the common lane', () => {
  it(`${ROWS} values in one group, most of them 1e-6, sum and average exactly over HTTP; so do its halves grouped by country`, async () => {
    const all = Array.from({ length: ROWS }, (_, i) => i);
    for (const [groupBy, groups] of [['', [all]], ['&groupBy=country', [all.filter((i) => countryOf(i) === 'ES'), all.filter((i) => countryOf(i) === 'PT')]]] as const) {
      const r = await server.get(`/api/v1/hotspots/aggregate?from=2025-08-01&to=2025-08-02&interval=all&stats=frp.sum,frp.mean&format=csv${groupBy}`);
      expect(r.status).toBe(200);
      const [header, ...rows] = parseCsv(await r.text());
      const got = rows.map((row) => Object.fromEntries(header!.map((h, i) => [h, row[i]!])));
      expect(got.map((g) => [Number(g.count), Number(g['frp.sum']), Number(g['frp.mean'])])).toEqual(groups.map((ix) => [ix.length, exactSum(ix.map(valueOf)), exactMean(ix.map(valueOf))]));
    }
  });

  it('the statement lists a group\'s rare values, and only those: none for a measure wholly in the common lane', async () => {
    const shape = { interval: 'all', keys: [{ kind: 'column', column: 'country' }], cellHundredths: null, stats: [{ name: 'frp.sum', column: 'frp', fn: 'sum' }, { name: 'scan.mean', column: 'scan', fn: 'mean' }] } as never;
    const query = { spec: spec(hotspots, dir), files: [file], window: { from: at('2025-08-01'), to: at('2025-08-02') }, shape, limit: 10 };
    expect(aggregateColumns(query).summed).toEqual(['frp', 'scan']);
    const q = compileAggregate(query);
    const c = await (await DuckDBInstance.create(':memory:')).connect();
    const result = await c.runAndReadAll(q.sql, q.params);
    const rows = result.getRowObjectsJS() as { k0: string; v0: number[] | null; v1: number[] | null }[];
    c.closeSync();
    // frp: every row but those of 1.5 (k = 12); scan (0.39): none.
    const rare = (country: string) => Array.from({ length: ROWS }, (_, i) => i).filter((i) => countryOf(i) === country && i % 16 !== 12).map(valueOf);
    expect(rows.map((r) => [r.k0, [...(r.v0 ?? [])].sort((a, b) => a - b), r.v1])).toEqual(['ES', 'PT'].map((k) => [k, rare(k).sort((a, b) => a - b), null]));
  });

  it('a sum past the largest double is null and a mean rounding to -0 is 0, the same bytes fresh and from the cache', async () => {
    const cached = await startServer(dir);
    try {
      const url = '/api/v1/hotspots/aggregate?from=2025-08-05&to=2025-08-06&interval=all&groupBy=country&stats=frp.sum,frp.mean';
      const arrow = async () => Buffer.from(await (await cached.get(url, { headers: { accept: ARROW } })).arrayBuffer());
      const cache = cached.context.extract.aggregateCache!;
      // Kept when first computed: the second comes from the cache.
      const fresh = await arrow();
      const hits = cache.hits;
      const again = await arrow();
      expect(cache.hits).toBe(hits + 1);
      expect(again.equals(fresh)).toBe(true);
      const rows = (await tableFromIPC(fresh).toArray()).map((r) => r.toJSON());
      expect(rows.map((r) => [r.country, r['frp.sum'], Object.is(r['frp.mean'], -0) ? '-0' : r['frp.mean']])).toEqual([['HI', null, 1.7e308], ['LO', -5e-324, 0]]);
    } finally {
      await cached.close();
    }
  });
});
