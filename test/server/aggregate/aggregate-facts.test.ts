import { utimes } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { listDatasetFiles } from '../../../queries/files/partitions.ts';
import { CHAIN } from '../../helpers/sample-data.ts';
import { hotspot, tempDir, writeChain } from '../../helpers/fixtures.ts';
import { writeParquet } from '../../helpers/parquet.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { until } from '../../helpers/until.ts';

// The files' facts (FileFacts) let aggregates skip per-row tests: a server that knows them answers
// with the same bytes as one that does not, on every path (parts, parts cut inside a bucket and
// merged, spooled groups), and a file a request checked first gets them from the next background round.
let dir: string;
let known: TestServer;
let tested: TestServer;
const DAYS = ['01', '02', '03', '04', '05'];

/** A day's detections: fractional powers (whose sums a plain addition would not get exact), positions on the grid's edges too. */
function day(d: string, over: (i: number) => Record<string, unknown> = () => ({})) {
  return Array.from({ length: 120 }, (_, i) =>
    hotspot(`${d}-${String(i).padStart(4, '0')}`, `2025-08-${d}T${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00Z`, {
      country: ['PT', 'ES', null][i % 3],
      frp: 0.1 * (i % 17) + i / 7,
      scan: i % 5 === 0 ? null : 0.3 + i / 1000,
      longitude: i % 11 === 0 ? 180 : -8.3 + i / 100,
      latitude: i % 13 === 0 ? -90 : 39.1 + i / 50,
      ...over(i),
    }),
  ).sort((a, b) => (String(a.acquiredAtUtc) < String(b.acquiredAtUtc) ? -1 : String(a.acquiredAtUtc) > String(b.acquiredAtUtc) ? 1 : String(a.id) < String(b.id) ? -1 : 1));
}

const fileOf = (d: string) => path.join(dir, `hotspots/date=2025-08-${d}/a.parquet`);
const factsOf = async (s: TestServer, d: string) => {
  const f = (await listDatasetFiles(dir, hotspots)).files.find((x) => x.path === fileOf(d))!;
  const v = s.context.extract.checker.cached(hotspots, f);
  return v?.ok ? (v.facts ?? null) : undefined;
};

beforeAll(async () => {
  dir = await tempDir();
  await writeChain(dir, 'hotspots', CHAIN);
  // Day 05 holds a power below the common lane: statements over it take the tested way for frp.
  for (const d of DAYS) await writeParquet(fileOf(d), hotspots, day(d, (i) => (d === '05' && i === 7 ? { frp: 1e-7 } : {})));
  const both = { AGGREGATE_SPOOL_ROWS: '200', AGGREGATE_ROW_LIMIT: '100000' };
  tested = await startServer(dir, both);
  known = await startServer(dir, { ...both, WARM_FILE_CHECKS: 'true', FILE_CHECK_INTERVAL_MS: '100' });
  expect(await until(async () => (await Promise.all(DAYS.map((d) => factsOf(known, d)))).every((f) => f))).toBe(true);
}, 60_000);
afterAll(async () => {
  await known?.close();
  await tested?.close();
});

it('answers with the same bytes with the files\' facts known as without, over proven and unproven files alike', async () => {
  expect(await factsOf(known, '01')).toEqual({ common: [...hotspots.aggregate!.measures], inGrid: true });
  expect((await factsOf(known, '05'))!.common).not.toContain('frp');
  expect(await factsOf(tested, '01')).toBeUndefined();
  const queries = [
    'from=2025-08-01&to=2025-08-05&groupBy=country&stats=frp.sum,frp.mean,frp.max,scan.sum,scan.mean',
    'from=2025-08-01&to=2025-08-06&groupBy=country&stats=frp.sum,frp.mean,scan.sum',
    'from=2025-08-01&to=2025-08-05&interval=all&groupBy=grid&cell=0.25&stats=frp.sum,frp.mean,scan.count',
    'from=2025-08-01&to=2025-08-06&interval=all&groupBy=grid&cell=1&stats=frp.sum',
    'from=2025-08-01&to=2025-08-05&interval=hour&groupBy=country&stats=frp.mean,scan.sum',
    'from=2025-08-02T06:00Z&to=2025-08-04T18:00Z&interval=week&groupBy=country,grid&cell=0.25&stats=frp.sum',
  ];
  for (const q of queries) {
    for (const format of ['csv', 'geojson']) {
      const path = `/api/v1/hotspots/aggregate?${q}&format=${format}`;
      const [a, b] = await Promise.all([known.get(path), tested.get(path)]);
      expect([a.status, b.status], path).toEqual([200, 200]);
      const [ta, tb] = await Promise.all([a.text(), b.text()]);
      // GeoJSON's meta block says how old the observation is: the same data, read a moment apart.
      const strip = (t: string) => t.replace(/"ageSeconds":\d+/, '');
      expect(strip(ta), path).toBe(strip(tb));
      expect(ta.length).toBeGreaterThan(100);
    }
  }
});

it('finds the facts of a file a request checked first, in the next background round', async () => {
  await writeParquet(fileOf('06'), hotspots, day('06'));
  // Modified "later": the background rounds leave a file alone until it has settled, so the request checks it first.
  const later = new Date(Date.now() + 3_000);
  await utimes(fileOf('06'), later, later);
  const r = await known.get('/api/v1/hotspots/aggregate?from=2025-08-06&to=2025-08-07&stats=frp.sum&format=csv');
  expect(r.status).toBe(200);
  await r.text();
  expect(await factsOf(known, '06')).toBeNull();
  expect(await until(async () => (await factsOf(known, '06')) !== null)).toBe(true);
  expect(await factsOf(known, '06')).toEqual({ common: [...hotspots.aggregate!.measures], inGrid: true });
});

it('takes the fast way on every path once the facts are known: shown by a lie (a power the halves cannot hold, claimed common, fails the statement)', async () => {
  // No answer cache: the second asking must compute.
  const liar = await startServer(dir, { AGGREGATE_SPOOL_ROWS: '200', AGGREGATE_ROW_LIMIT: '100000', AGGREGATE_CACHE_MB: '0' });
  try {
    for (const d of ['07', '08']) await writeParquet(fileOf(d), hotspots, day(d, (i) => (i === 3 ? { frp: 2 ** 30 } : {})));
    const all = '/api/v1/hotspots/aggregate?stats=frp.sum&format=csv';
    const paths = {
      held: `${all}&from=2025-08-07&to=2025-08-08&groupBy=country`,
      spooled: `${all}&from=2025-08-07&to=2025-08-09&interval=hour`,
      merged: `${all}&from=2025-08-07&to=2025-08-09&interval=all&groupBy=grid&cell=1`,
    };
    // Told the truth (no facts yet: the requests check the files themselves), every path answers.
    for (const p of Object.values(paths)) expect((await liar.get(p)).status, p).toBe(200);
    const checker = liar.context.extract.checker;
    for (const f of (await listDatasetFiles(dir, hotspots)).files.filter((x) => /2025-08-0[78]/.test(x.path))) {
      const v = checker.cached(hotspots, f);
      if (!v?.ok) throw new Error('not checked');
      checker.remember(hotspots, f, { ...v, facts: { common: [...hotspots.aggregate!.measures], inGrid: true } });
    }
    for (const p of Object.values(paths)) expect((await liar.get(p)).status, p).not.toBe(200);
  } finally {
    await liar.close();
  }
});
