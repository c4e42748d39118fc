import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeChain } from '../helpers/fixtures.ts';
import { rawGet, stalledGet, waitFor } from '../helpers/http.ts';
import { corruptColumn, writeBulkHotspots } from '../helpers/parquet.ts';
import { CHAIN } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let dir: string;
let server: TestServer;
beforeAll(async () => {
  dir = await tempDir();
  for (let d = 1; d <= 16; d++) {
    const day = `2025-08-${String(d).padStart(2, '0')}`;
    await writeBulkHotspots(path.join(dir, `hotspots/date=${day}/a.parquet`), day, 20_000, 3);
  }
  // Partitions stream in groups of 7: the bad one is read only after a first group has gone out.
  await writeBulkHotspots(path.join(dir, 'hotspots/date=2025-08-20/a.parquet'), '2025-08-20', 20_000, 3);
  await corruptColumn(path.join(dir, 'hotspots/date=2025-08-20/a.parquet'), 'confidence');
  await writeChain(dir, 'hotspots', CHAIN);
  server = await startServer(dir, { DUCKDB_CONNECTIONS: '3' });
});
afterAll(() => server.close());

describe('a 200 never ends cleanly short of its rows', () => {
  it('a data page that fails mid-stream aborts the transfer instead of ending it', async () => {
    for (const format of ['csv', 'geojson']) {
      const r = await rawGet(`${server.url}/api/v1/hotspots?from=2025-08-10&to=2025-08-21&format=${format}`, { headers: server.auth });
      expect(r.status).toBe(200);
      expect(Number(r.headers['x-returned'])).toBe(8 * 20_000);
      expect(r.bytes).toBeGreaterThan(1_000_000);
      expect(r.complete).toBe(false);
    }
    // Parquet stops before its footer and Arrow before its end marker: the transfer is cut too.
    for (const accept of ['application/vnd.apache.parquet', 'application/vnd.apache.arrow.stream']) {
      const r = await rawGet(`${server.url}/api/v1/hotspots?from=2025-08-10&to=2025-08-21`, { headers: { ...server.auth, accept } });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe(accept);
      expect(Number(r.headers['x-returned'])).toBe(8 * 20_000);
      expect(r.bytes).toBeGreaterThan(100_000);
      expect(r.complete).toBe(false);
    }
    expect(await waitFor(() => server.engine.busy === 0)).toBe(true);
  });

  it('a compressed body that fails mid-stream is cut too: no clean end of the coding, no last chunk', async () => {
    for (const coding of ['gzip', 'br']) {
      const r = await rawGet(`${server.url}/api/v1/hotspots?from=2025-08-10&to=2025-08-21&format=csv`, { headers: { ...server.auth, 'accept-encoding': coding } });
      expect(r.status).toBe(200);
      expect(r.headers['content-encoding']).toBe(coding);
      expect(r.bytes).toBeGreaterThan(10_000);
      expect(r.complete).toBe(false);
    }
    expect(await waitFor(() => server.engine.busy === 0)).toBe(true);
  });

  it('the same window without the bad partition completes cleanly', async () => {
    const r = await rawGet(`${server.url}/api/v1/hotspots?from=2025-08-01&to=2025-08-04&format=csv`, { headers: server.auth });
    expect(r.status).toBe(200);
    expect(r.complete).toBe(true);
  });
});

describe('interrupted requests return their connection', () => {
  it('100 requests aborted mid-stream, a third of them gzip- and a third br-coded, leave no busy connection', async () => {
    const codings = ['identity', 'gzip', 'br'];
    for (let i = 0; i < 100; i++) {
      const headers = { ...server.auth, 'accept-encoding': codings[i % 3]! };
      const r = await rawGet(`${server.url}/api/v1/hotspots?from=2025-08-01&to=2025-08-02&format=${i % 2 ? 'csv' : 'geojson'}`, { headers, abortAfterBytes: 1 + (i % 10) * 20_000 });
      expect(r.complete).toBe(false);
    }
    expect(await waitFor(() => server.engine.busy === 0)).toBe(true);
    const after = await rawGet(`${server.url}/api/v1/hotspots?from=2025-08-01&to=2025-08-02&format=csv`, { headers: server.auth });
    expect(after.complete).toBe(true);
    expect(Number(after.headers['x-returned'])).toBe(20_000);
  }, 60_000);

  it('a slow reader does not hold a DuckDB connection once the last group is written', async () => {
    // Two groups (the first partition, then the rest): both COPYs finish long before a paused
    // client has taken the ~48 MB, which no socket buffer can absorb.
    const s = await startServer(dir, { GROUP_ROWS: '100000000' });
    try {
      const pending = rawGet(`${s.url}/api/v1/hotspots?from=2025-08-01&to=2025-08-17&format=csv`, { headers: s.auth, pauseMs: 5000 });
      expect(await waitFor(() => s.engine.busy > 0, 2000)).toBe(true);
      expect(await waitFor(() => s.engine.busy === 0, 4000)).toBe(true);
      const r = await pending;
      expect(r.complete).toBe(true);
      expect(Number(r.headers['x-returned'])).toBe(16 * 20_000);
    } finally {
      await s.close();
    }
  });

  it('beyond the wait queue a request is a quick 503 with Retry-After, not a pile-up', async () => {
    const full = await startServer(dir, { DUCKDB_CONNECTIONS: '1', DUCKDB_QUEUE_MAX: '0' });
    // The only connection, held as a long query would hold it.
    const held = await full.engine.acquire();
    try {
      const r = await full.get('/api/v1/hotspots?from=2025-08-01&to=2025-08-02&format=csv');
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(((await r.json()) as { detail: string }).detail).toMatch(/capacity/);
    } finally {
      held.release();
      await full.close();
    }
  });

  it('a query timeout before the first byte is a 503 and the connection comes back', async () => {
    const slow = await startServer(dir, { QUERY_TIMEOUT_MS: '1', DUCKDB_THREADS: '1' });
    try {
      const r = await rawGet(`${slow.url}/api/v1/hotspots?from=2025-08-01&to=2025-08-17`, { headers: slow.auth });
      expect(r.status).toBe(503);
      expect(r.headers['retry-after']).toMatch(/^\d+$/);
      expect(await waitFor(() => slow.engine.busy === 0)).toBe(true);
    } finally {
      await slow.close();
    }
  });
});
