import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { beforeAll, describe, expect, it } from 'vitest';
import { ARROW, fetchBytes, PARQUET } from '../../helpers/columnar.ts';
import { tempDir, writeChain } from '../../helpers/fixtures.ts';
import { waitFor } from '../../helpers/http.ts';
import { bulkHotspotsSql } from '../../helpers/aggregate-data.ts';
import { CHAIN } from '../../helpers/sample-data.ts';
import { serverPerTest, type TestServer } from '../../helpers/server.ts';

const start = serverPerTest();
const serve = (env: Record<string, string>) => start(dataDir, { AGGREGATE_CACHE_MB: '0', ...env });

let dataDir: string;
/**
 * Three days of 30,000 detections, row groups of 5,000 rows. FRP fractional, with 2^53 in a few
 * rows of each country on each day: a part's sum rounded to a double loses the fractions the
 * other parts add, so only an exact merge of the parts gives one statement's sums.
 */
beforeAll(async () => {
  dataDir = await tempDir();
  const c = await (await DuckDBInstance.create(':memory:')).connect();
  for (const day of ['01', '02', '03']) {
    const file = path.join(dataDir, `hotspots/date=2025-07-${day}/a.parquet`);
    await mkdir(path.dirname(file), { recursive: true });
    const frp = 'CASE WHEN i % 9973 < 4 THEN 9007199254740992.0 ELSE ((hash(i * 13) % 100000) / 1000.0 + 0.1) END';
    await c.run(`COPY (${bulkHotspotsSql({ day, idPrefix: day, rows: 30000, step: 7, frp })}) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 5000)`);
  }
  c.closeSync();
  await writeChain(dataDir, 'hotspots', CHAIN);
}, 60_000);

const H = '/api/v1/hotspots/aggregate?from=2025-07-01T03:00:00Z&to=2025-07-03T21:00:00Z';
/** One bucket (all, a year, a week) for the whole window: one part per connection only when cut inside it. */
const QUERIES = [
  `${H}&interval=all&groupBy=country&stats=frp.sum,frp.mean,frp.min,frp.max,frp.count,bright_ti4.mean`,
  `${H}&interval=year&groupBy=grid,product&cell=0.5&stats=frp.sum,frp.mean`,
  `${H}&interval=week&groupBy=product,country&stats=frp.sum,bright_ti4.sum`,
];
const ASKS: [string, string | undefined][] = QUERIES.flatMap((q): [string, string | undefined][] => [[q, undefined], [`${q}&format=csv`, undefined], [q, PARQUET], [q, ARROW]]);

/** Every answer's bytes (GeoJSON's chain age moves with the clock), one request at a time so each finds idle connections. */
async function answers(s: TestServer, asks = ASKS): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (const [url, accept] of asks) {
    const r = await fetchBytes(s.get, url, accept);
    expect(r.status).toBe(200);
    out.push(accept ? r.bytes : Buffer.from(r.bytes.toString('utf8').replace(/"ageSeconds":\d+/, '"ageSeconds":0')));
  }
  return out;
}

const same = (a: Buffer[], b: Buffer[]) => a.map((x, i) => x.equals(b[i]!));

describe('a window of one bucket, cut inside it and merged', () => {
  it('answers byte for byte as one statement: every format, DUCKDB_THREADS 1 and 4, its groups held or (many rows) spooled, from the aggregate cache too', async () => {
    const one = await answers(await serve({ EXTRACT_CONNECTIONS: '1', DUCKDB_THREADS: '1' }));
    const all = ASKS.map(() => true);
    expect(same(await answers(await serve({ EXTRACT_CONNECTIONS: '3', DUCKDB_CONNECTIONS: '4', DUCKDB_THREADS: '1' })), one)).toEqual(all);
    expect(same(await answers(await serve({ EXTRACT_CONNECTIONS: '3', DUCKDB_CONNECTIONS: '4', DUCKDB_THREADS: '4' })), one)).toEqual(all);
    // Never spooled: the held answers' own merge.
    expect(same(await answers(await serve({ EXTRACT_CONNECTIONS: '3', DUCKDB_CONNECTIONS: '4', AGGREGATE_SPOOL_ROWS: '0' })), one)).toEqual(all);
    // Kept by the aggregate cache as computed, and answered from it alike.
    const cached = await serve({ EXTRACT_CONNECTIONS: '3', DUCKDB_CONNECTIONS: '4', AGGREGATE_CACHE_MB: '32' });
    expect(same(await answers(cached), one)).toEqual(all);
    expect(same(await answers(cached), one)).toEqual(all);
    expect((await (await fetch(`${cached.url}/metrics`)).text()).match(/^fire_api_aggregate_cache_hits_total (\d+)$/m)?.[1]).toBe(String(ASKS.length));
    const csv = one[1]!.toString('utf8').split('\n');
    expect(csv).toHaveLength(4 + 2);
    // The 2^53 values are in the sums: 90,000 rows' worth of fractions on top of them.
    expect(Number(csv[1]!.split(',')[3])).toBeGreaterThan(2 ** 55);
  }, 120_000);

  it('cuts past AGGREGATE_ROW_LIMIT as one statement does, from the merged groups', async () => {
    const grid = `${H}&interval=all&groupBy=grid&cell=0.5&stats=frp.sum&format=csv`;
    const week = `${H}&interval=week&groupBy=grid&cell=0.5&stats=frp.mean&format=csv`;
    const asks: [string, undefined][] = [[grid, undefined], [week, undefined]];
    const limit = { AGGREGATE_ROW_LIMIT: '50' };
    const one = await answers(await serve({ ...limit, EXTRACT_CONNECTIONS: '1' }), asks);
    expect(same(await answers(await serve({ ...limit, EXTRACT_CONNECTIONS: '3', DUCKDB_CONNECTIONS: '4' }), asks), one)).toEqual([true, true]);
    expect(same(await answers(await serve({ ...limit, EXTRACT_CONNECTIONS: '3', DUCKDB_CONNECTIONS: '4', AGGREGATE_SPOOL_ROWS: '0' }), asks), one)).toEqual([true, true]);
    expect(one[0]!.toString('utf8').split('\n')).toHaveLength(50 + 2);
  }, 120_000);

  it('plans a shape whose one-bucket window had more groups than the merge holds whole the next time, its bytes unchanged; a shape that fit stays cut', async () => {
    // Stats of their own: the plan is remembered per process, per shape.
    const many = `${H}&interval=all&groupBy=grid&cell=0.01&stats=frp.max&format=csv`;
    const few = `${H}&interval=all&groupBy=grid&cell=0.5&stats=frp.max&format=csv`;
    const s = await serve({ EXTRACT_CONNECTIONS: '3', DUCKDB_CONNECTIONS: '4' });
    // As /metrics counts them (per process: the deltas of one request).
    const plans = async () => {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      const count = (name: string) => Number(text.match(new RegExp(`^fire_api_aggregate_split_${name}_total (\\d+)$`, 'm'))?.[1]);
      return { cut: count('cut'), whole: count('whole') };
    };
    const plansAfter = async (url: string) => {
      const before = await plans();
      const [bytes] = await answers(s, [[url, undefined]]);
      const after = await plans();
      return { bytes: bytes!, cut: after.cut - before.cut, whole: after.whole - before.whole };
    };
    const first = await plansAfter(many);
    expect([first.cut, first.whole]).toEqual([1, 0]);
    const again = await plansAfter(many);
    expect([again.cut, again.whole]).toEqual([0, 1]);
    const fit = [await plansAfter(few), await plansAfter(few)];
    expect(fit.map((f) => [f.cut, f.whole])).toEqual([[1, 0], [1, 0]]);
    const one = await answers(await serve({ EXTRACT_CONNECTIONS: '1' }), [[many, undefined], [few, undefined]]);
    expect(same([first.bytes, again.bytes, fit[0]!.bytes, fit[1]!.bytes], [one[0]!, one[0]!, one[1]!, one[1]!])).toEqual([true, true, true, true]);
    // More groups than the merge holds (20,000): the first request's parts were run and given up.
    expect(one[0]!.toString('utf8').split('\n').length).toBeGreaterThan(20_002);
  }, 120_000);

  it("stops a first request's parts once its first piece alone has more groups than the merge holds, answers it whole byte for byte, and gives every connection back", async () => {
    // The three days whole (90,000 rows) on two connections: the first part's first 40,000 rows or so alone first.
    const days = '/api/v1/hotspots/aggregate?from=2025-07-01T00:00:00Z&to=2025-07-04T00:00:00Z&interval=all&groupBy=grid&stats=frp.min&format=csv';
    const [many, few] = [`${days}&cell=0.01`, `${days}&cell=0.5`];
    const s = await serve({ EXTRACT_CONNECTIONS: '2', DUCKDB_CONNECTIONS: '4' });
    const stopped = async () => Number((await (await fetch(`${s.url}/metrics`)).text()).match(/^fire_api_aggregate_split_stopped_total (\d+)$/m)?.[1]);
    const got: { bytes: Buffer; stopped: number }[] = [];
    // Stopped the first time; planned whole the next; a shape that fits is merged.
    for (const url of [many, many, few]) {
      const before = await stopped();
      const [bytes] = await answers(s, [[url, undefined]]);
      got.push({ bytes: bytes!, stopped: (await stopped()) - before });
    }
    expect(got.map((g) => g.stopped)).toEqual([1, 0, 0]);
    expect(await waitFor(() => s.engine.busy === 0, 10_000)).toBe(true);
    const one = await answers(await serve({ EXTRACT_CONNECTIONS: '1' }), [[many, undefined], [few, undefined]]);
    expect(same(got.map((g) => g.bytes), [one[0]!, one[0]!, one[1]!])).toEqual([true, true, true]);
    expect(one[0]!.toString('utf8').split('\n').length).toBeGreaterThan(20_002);
  }, 120_000);

  it('interrupts every part when the client goes, and gives every connection back; the next request is answered', async () => {
    // Held and merged; and spooled, its first part's first piece alone first (a shape not seen, of many groups).
    const asks: { env: Record<string, string>; url: string }[] = [
      { env: { EXTRACT_CONNECTIONS: '3', AGGREGATE_SPOOL_ROWS: '0' }, url: `${QUERIES[1]}&format=csv` },
      { env: { EXTRACT_CONNECTIONS: '2' }, url: `/api/v1/hotspots/aggregate?from=2025-07-01T00:00:00Z&to=2025-07-04T00:00:00Z&interval=all&groupBy=grid&cell=0.01&stats=bright_ti4.sum&format=csv` },
    ];
    for (const { env, url } of asks) {
      const s = await serve({ ...env, DUCKDB_CONNECTIONS: '4' });
      const controller = new AbortController();
      const gone = s.get(url, { signal: controller.signal }).catch((e: unknown) => e);
      expect(await waitFor(() => s.engine.busy > 0, 10_000)).toBe(true);
      controller.abort();
      // Gone before its answer (an abort error), or, on a fast machine, just after it: connections come back either way.
      await gone;
      expect(await waitFor(() => s.engine.busy === 0, 10_000)).toBe(true);
      expect((await s.get(`${QUERIES[0]}&format=csv`)).status).toBe(200);
    }
  }, 60_000);
});
