import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeChain } from '../helpers/fixtures.ts';
import { rawGet, stalledGet, waitFor } from '../helpers/http.ts';
import { corruptColumn, writeBulkHotspots } from '../helpers/parquet.ts';
import { CHAIN } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/**
 * Rows of each day: the day aborted mid-stream 20 000 (bodies of several reads, even in br), the days
 * of the window with a bad partition 13 000 (more than one group in all), the days between, which
 * only fill windows, 3 000.
 */
const DAY_ROWS = (day: number) => (day === 1 ? 20_000 : day < 10 ? 3_000 : 13_000);
let dir: string;
let server: TestServer;
beforeAll(async () => {
  dir = await tempDir();
  for (let d = 1; d <= 16; d++) {
    const day = `2025-08-${String(d).padStart(2, '0')}`;
    await writeBulkHotspots(path.join(dir, `hotspots/date=${day}/a.parquet`), day, DAY_ROWS(d), 3);
  }
  // With GROUP_ROWS 100 000 the window 10 to 20 streams as day 10 alone, then the rest with the bad
  // one, which is read only after a first group has gone out.
  await writeBulkHotspots(path.join(dir, 'hotspots/date=2025-08-20/a.parquet'), '2025-08-20', DAY_ROWS(20), 3);
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
      expect(Number(r.headers['x-returned'])).toBe(8 * 13_000);
      expect(r.bytes).toBeGreaterThan(1_000_000);
      expect(r.complete).toBe(false);
    }
    // Parquet stops before its footer and Arrow before its end marker: the transfer is cut too.
    for (const accept of ['application/vnd.apache.parquet', 'application/vnd.apache.arrow.stream']) {
      const r = await rawGet(`${server.url}/api/v1/hotspots?from=2025-08-10&to=2025-08-21`, { headers: { ...server.auth, accept } });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe(accept);
      expect(Number(r.headers['x-returned'])).toBe(8 * 13_000);
      // The first group, day 10: Parquet holds its 13 000 rows in about 29 kB.
      expect(r.bytes).toBeGreaterThan(accept === 'application/vnd.apache.parquet' ? 20_000 : 100_000);
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
  it('requests aborted mid-stream, in each coding (identity, gzip, br) and format, after the first read and after several, leave no busy connection', async () => {
    // The CSV of the day and the GeoJSON of its first hour (10 800 Features, past 4 MB: both sent from
    // a temp file), each over 200 kB even in br. Reads come in pieces of up to 64 kB: the client hangs
    // up after the first, or after the second or third, well inside every body.
    const windows = ['from=2025-08-01&to=2025-08-02&format=csv', 'from=2025-08-01T00:00:00Z&to=2025-08-01T01:00:00Z'];
    for (const coding of ['identity', 'gzip', 'br'])
      for (const window of windows)
        for (const abortAfterBytes of [1, 100_001]) {
          const headers = { ...server.auth, 'accept-encoding': coding };
          const r = await rawGet(`${server.url}/api/v1/hotspots?${window}`, { headers, abortAfterBytes });
          expect(r.complete).toBe(false);
        }
    expect(await waitFor(() => server.engine.busy === 0)).toBe(true);
    const after = await rawGet(`${server.url}/api/v1/hotspots?from=2025-08-01&to=2025-08-02&format=csv`, { headers: server.auth });
    expect(after.complete).toBe(true);
    expect(Number(after.headers['x-returned'])).toBe(20_000);
  }, 60_000);

  it('a slow reader does not hold a DuckDB connection once the last group is written', async () => {
    // The window's rows within one group (GROUP_ROWS 100 000 000): written whole, in slices side by
    // side, before the first byte. A paused client has taken little of its ~20 MB, which no socket
    // buffer can absorb: the rest waits in temp files while every connection is back.
    const s = await startServer(dir, { GROUP_ROWS: '100000000' });
    const leftFiles = async () => (await readdir(s.context.extract.tempDir)).filter((f) => f.endsWith('.csv'));
    try {
      let bytes = 0;
      const paused = new Promise<import('node:http').IncomingMessage>((resolve) => {
        stalledGet(`${s.url}/api/v1/hotspots?from=2025-08-01&to=2025-08-17&format=csv`, s.auth, resolve);
      });
      expect(await waitFor(() => s.engine.busy > 0, 10_000)).toBe(true);
      const res = await paused;
      expect(await waitFor(() => s.engine.busy === 0, 10_000)).toBe(true);
      expect((await leftFiles()).length).toBeGreaterThan(0);
      const complete = await new Promise<boolean>((resolve) => {
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.once('close', () => resolve(res.complete));
        res.resume();
      });
      expect(complete).toBe(true);
      expect(bytes).toBeGreaterThan(15_000_000);
      expect(Number(res.headers['x-returned'])).toBe(20_000 + 8 * 3_000 + 7 * 13_000);
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
