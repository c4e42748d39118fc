import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hotspots } from '../../datasets/hotspots.ts';
import { hotspot } from '../helpers/fixtures.ts';
import { writeParquet } from '../helpers/parquet.ts';
import { writeSampleData } from '../helpers/sample-data.ts';
import { serverPerTest, type TestServer } from '../helpers/server.ts';

const start = serverPerTest();
const serve = (dir: string, env: Record<string, string> = {}) => start(dir, { RESPONSE_CACHE_MB: '64', ...env });
const metric = async (s: TestServer, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(`${s.url}/metrics`)).text())?.[1]);
const Q = '/api/v1/hotspots?from=2025-08-01&to=2025-08-03';
const text = async (s: TestServer, q = Q) => {
  const r = await s.get(q);
  expect(r.status).toBe(200);
  // The chain's age moves with the clock; everything else must be the same bytes.
  const body = (await r.text()).replace(/"ageSeconds":\d+/, '"ageSeconds":0');
  return { body, returned: r.headers.get('x-returned'), version: r.headers.get('x-data-version') };
};

describe('rows of recent small responses', () => {
  it('answer a repeated request without DuckDB: same rows, a fresh meta, even with every connection busy', async () => {
    const s = await serve(await writeSampleData(), { DUCKDB_CONNECTIONS: '1' });
    // Asked once: streamed; asked again: kept; then answered from memory.
    const first = await text(s);
    expect(await text(s)).toEqual(first);
    expect(await metric(s, 'fire_api_rows_cache_misses_total')).toBe(2);
    const held = await s.engine.acquire();
    try {
      const again = await text(s);
      expect(again).toEqual(first);
      expect(await metric(s, 'fire_api_rows_cache_hits_total')).toBe(1);
      // CSV is another response (another tag): it needs the engine, which is busy.
      const csv = s.get(`${Q}&format=csv`, { signal: AbortSignal.timeout(300) });
      await expect(csv).rejects.toThrow();
    } finally {
      held.release();
    }
    expect(await metric(s, 'fire_api_rows_cache_bytes')).toBeGreaterThan(0);
  });

  it('never answer for new data: a late file is a new data version and its rows are served', async () => {
    const dir = await writeSampleData();
    const s = await serve(dir);
    const before = await text(s, `${Q}&format=csv`);
    await writeParquet(path.join(dir, 'hotspots/date=2025-08-02/late.parquet'), hotspots, [hotspot('late-1', '2025-08-02T05:00:00Z')]);
    const after = await text(s, `${Q}&format=csv`);
    expect(after.version).not.toBe(before.version);
    expect(Number(after.returned)).toBe(Number(before.returned) + 1);
    expect(after.body).toContain('late-1,');
    expect(await metric(s, 'fire_api_rows_cache_hits_total')).toBe(0);
  });

  it('are off with RESPONSE_CACHE_MB=0, the default', async () => {
    const s = await start(await writeSampleData());
    expect(s.context.config.responseCacheBytes).toBe(0);
    expect((await text(s)).body).toBe((await text(s)).body);
    expect(await metric(s, 'fire_api_rows_cache_hits_total')).toBe(0);
  });
});

describe('a request that needs no DuckDB waits for no connection', () => {
  it('a 304 over files already checked is answered while every connection is busy', async () => {
    const s = await serve(await writeSampleData(), { DUCKDB_CONNECTIONS: '1', RESPONSE_CACHE_MB: '0' });
    const first = await s.get(Q);
    await first.arrayBuffer();
    const held = await s.engine.acquire();
    try {
      const again = await s.get(Q, { headers: { 'if-none-match': first.headers.get('etag')! }, signal: AbortSignal.timeout(2000) });
      expect(again.status).toBe(304);
    } finally {
      held.release();
    }
  });
});
