import { rename } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { sensorReadings } from '../../../datasets/sensor-readings.ts';
import { sensorStations } from '../../../datasets/sensor-stations.ts';
import { writeAggregateData } from '../../helpers/aggregate-data.ts';
import { ARROW, fetchBytes, PARQUET } from '../../helpers/columnar.ts';
import { hotspot, reading, station, tempDir, writeChain } from '../../helpers/fixtures.ts';
import { writeParquet } from '../../helpers/parquet.ts';
import { CHAIN } from '../../helpers/sample-data.ts';
import { serverPerTest, type TestServer } from '../../helpers/server.ts';

const H = '/api/v1/hotspots/aggregate';
const GRID = `${H}?from=2024-02-28&to=2024-03-05&groupBy=country,grid&cell=0.25&stats=frp.sum,frp.mean`;

let dataDir: string;
beforeAll(async () => {
  dataDir = await writeAggregateData();
}, 60_000);
const start = serverPerTest();
const serve = (env: Record<string, string> = {}, dir = dataDir) => start(dir, env);

const metric = async (s: TestServer, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(`${s.url}/metrics`)).text())?.[1]);
const counts = async (s: TestServer) => ({ hits: await metric(s, 'fire_api_aggregate_cache_hits_total'), misses: await metric(s, 'fire_api_aggregate_cache_misses_total') });
/** The body as bytes; GeoJSON's chain age moves with the clock, everything else must be the same bytes. */
const body = async (s: TestServer, url: string, accept?: string) => {
  const r = await fetchBytes(s.get, url, accept);
  expect(r.status).toBe(200);
  return { ...r, bytes: accept ? r.bytes : Buffer.from(r.bytes.toString('utf8').replace(/"ageSeconds":\d+/, '"ageSeconds":0')) };
};

describe('aggregate answers are kept when first computed (AGGREGATE_CACHE_MB, on by default)', () => {
  it('the second identical request is answered from the cache, without DuckDB even at capacity: the same bytes, the same ETag, and a 304 still works', async () => {
    const s = await serve({ DUCKDB_CONNECTIONS: '1', DUCKDB_QUEUE_MAX: '0', REFUSAL_HOLD_MS: '0' });
    expect(s.context.config.aggregateCacheBytes).toBe(32 * 1024 * 1024);
    const first = await body(s, GRID);
    expect(await counts(s)).toEqual({ hits: 0, misses: 1 });
    expect(await metric(s, 'fire_api_aggregate_cache_bytes')).toBeGreaterThan(0);
    // Every connection held and no room to wait: an answer needing a statement is refused now.
    const held = await s.engine.acquire();
    try {
      expect(s.engine.saturated).toBe(true);
      const again = await body(s, GRID);
      expect(again.bytes.equals(first.bytes)).toBe(true);
      expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
      expect(await counts(s)).toEqual({ hits: 1, misses: 1 });
      const fresh = await s.get(GRID, { headers: { 'if-none-match': first.headers.get('etag')! } });
      expect(fresh.status).toBe(304);
      expect((await s.get(`${GRID}&format=csv`)).status).toBe(503);
    } finally {
      held.release();
    }
  });

  it('bytes are identical computed, from the cache and from a server without it: GeoJSON, CSV, Parquet, Arrow', async () => {
    const [cached, plain] = [await serve(), await serve({ AGGREGATE_CACHE_MB: '0' })];
    const readings = '/api/v1/sensor-readings/aggregate?from=2024-02-29T22:00:00Z&to=2024-03-01T02:00&interval=hour&groupBy=stationId&stats=airTemperatureC.mean,precipitationMm.sum';
    const asks: [string, string | undefined][] = [[GRID, undefined], [`${GRID}&format=csv`, undefined], [GRID, PARQUET], [GRID, ARROW], [readings, PARQUET], [readings, ARROW], [`${readings}&format=csv`, undefined]];
    for (const [i, [url, accept]] of asks.entries()) {
      const computed = await body(cached, url, accept);
      const fromCache = await body(cached, url, accept);
      expect(await counts(cached)).toEqual({ hits: i + 1, misses: i + 1 });
      expect(fromCache.bytes.equals(computed.bytes)).toBe(true);
      expect((await body(plain, url, accept)).bytes.equals(computed.bytes)).toBe(true);
    }
    expect(await counts(plain)).toEqual({ hits: 0, misses: 0 });
  });

  it('keeps −0 as it is: a station on the prime meridian and the equator, a minimum of −0 °C, the same bytes from the cache in every format', async () => {
    const dir = await tempDir();
    await writeParquet(path.join(dir, 'sensor-stations/stations.parquet'), sensorStations, [station('ST0001', { latitude: -0, longitude: -0 })]);
    const rows = ['00', '30'].map((m) => reading('ST0001', `2024-03-01T00:${m}:00Z`, { airTemperatureC: -0, windSpeedMs: m === '00' ? -0 : 0 }));
    await writeParquet(path.join(dir, 'sensor-readings/date=2024-03-01/a.parquet'), sensorReadings, rows);
    for (const d of ['sensor-stations', 'sensor-readings']) await writeChain(dir, d, CHAIN);
    const [cached, plain] = [await serve({}, dir), await serve({ AGGREGATE_CACHE_MB: '0' }, dir)];
    const url = '/api/v1/sensor-readings/aggregate?from=2024-03-01&to=2024-03-02&interval=hour&groupBy=stationId&stats=airTemperatureC.min,airTemperatureC.max,windSpeedMs.min,windSpeedMs.max';
    for (const [format, accept] of [['', ARROW], ['', PARQUET], ['', undefined], ['&format=csv', undefined]] as const) {
      const [computed, fromCache, reference] = [await body(cached, url + format, accept), await body(cached, url + format, accept), await body(plain, url + format, accept)];
      expect([fromCache.bytes.equals(computed.bytes), computed.bytes.equals(reference.bytes)]).toEqual([true, true]);
    }
    expect((await counts(cached)).hits).toBe(4);
  });

  it('a replaced file is a new data version: its answer is computed, never the cached one', async () => {
    const dir = await writeAggregateData();
    const s = await serve({}, dir);
    const url = `${H}?from=2024-02-28&to=2024-03-05&groupBy=country&stats=frp.sum&format=csv`;
    const before = await body(s, url);
    expect((await body(s, url)).bytes.equals(before.bytes)).toBe(true);
    expect(await counts(s)).toEqual({ hits: 1, misses: 1 });
    // Replaced as writers do: a new file renamed over the old one.
    const file = path.join(dir, 'hotspots/date=2024-03-01/a.parquet');
    await writeParquet(`${file}.new`, hotspots, [hotspot('replaced-1', '2024-03-01T05:00:00Z', { country: 'ZZ', frp: 2.5 })]);
    await rename(`${file}.new`, file);
    const after = await body(s, url);
    expect(after.headers.get('x-data-version')).not.toBe(before.headers.get('x-data-version'));
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
    expect(after.bytes.toString()).toContain(',ZZ,1,2.5');
    expect(await counts(s)).toEqual({ hits: 1, misses: 2 });
    expect((await body(s, url)).bytes.equals(after.bytes)).toBe(true);
    expect(await counts(s)).toEqual({ hits: 2, misses: 2 });
  });
});

describe('what the cache gives back is what was computed', () => {
  it('a text key that reads like a number stays text', async () => {
    const dir = await writeAggregateData();
    await writeParquet(path.join(dir, 'hotspots/date=2024-03-02/a.parquet'), hotspots, [hotspot('odd-1', '2024-03-02T01:00:00Z', { country: '12n' })]);
    const s = await serve({}, dir);
    const url = `${H}?from=2024-03-02&to=2024-03-03&groupBy=country`;
    const first = await body(s, url);
    const again = await body(s, url);
    expect(await counts(s)).toEqual({ hits: 1, misses: 1 });
    expect(again.bytes.equals(first.bytes)).toBe(true);
    expect(first.bytes.toString()).toContain('"country":"12n"');
  });
});

describe('the cache is bounded', () => {
  const STATS = ['frp.sum', 'frp.max', 'frp.min', 'frp.mean', 'scan.sum', 'track.sum'];
  const ask = (stat: string) => `${GRID}&stats=${stat}`.replace('&stats=frp.sum,frp.mean', '');

  /** Each answer's bytes in the cache, measured on a server with the default budget. */
  async function entrySizes(): Promise<number[]> {
    const s = await serve();
    const sizes: number[] = [];
    for (const stat of STATS) {
      const before = await metric(s, 'fire_api_aggregate_cache_bytes');
      await body(s, ask(stat));
      sizes.push((await metric(s, 'fire_api_aggregate_cache_bytes')) - before);
    }
    return sizes;
  }

  it('the least recently used answers go first once the budget is full', async () => {
    const sizes = await entrySizes();
    // Room for four of the largest entry (an entry may take a quarter of the budget), not for all six.
    const budget = Math.max(...sizes) * 4;
    expect(sizes.reduce((a, b) => a + b)).toBeGreaterThan(budget);
    const s = await serve({ AGGREGATE_CACHE_MB: String(budget / 1024 / 1024) });
    for (const stat of STATS) await body(s, ask(stat));
    expect(await metric(s, 'fire_api_aggregate_cache_bytes')).toBeLessThanOrEqual(budget);
    expect(await counts(s)).toEqual({ hits: 0, misses: 6 });
    await body(s, ask(STATS.at(-1)!));
    expect(await counts(s)).toEqual({ hits: 1, misses: 6 });
    await body(s, ask(STATS[0]!));
    expect(await counts(s)).toEqual({ hits: 1, misses: 7 });
  });

  it('an answer larger than a quarter of the budget is not kept', async () => {
    const [size] = await entrySizes();
    const s = await serve({ AGGREGATE_CACHE_MB: String((size! * 3) / 1024 / 1024) });
    await body(s, ask(STATS[0]!));
    await body(s, ask(STATS[0]!));
    expect(await counts(s)).toEqual({ hits: 0, misses: 2 });
    expect(await metric(s, 'fire_api_aggregate_cache_bytes')).toBe(0);
  });

  it('AGGREGATE_CACHE_MB=0 turns it off, whatever RESPONSE_CACHE_MB says', async () => {
    const s = await serve({ AGGREGATE_CACHE_MB: '0', RESPONSE_CACHE_MB: '8' });
    expect(s.context.extract.aggregateCache).toBeNull();
    for (let i = 0; i < 3; i++) await body(s, GRID);
    expect(await counts(s)).toEqual({ hits: 0, misses: 0 });
    expect(await metric(s, 'fire_api_aggregate_cache_bytes')).toBe(0);
    expect(await metric(s, 'fire_api_rows_cache_hits_total')).toBe(0);
  });
});
