import { readdir, rename } from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeChain } from '../helpers/fixtures.ts';
import { rawGet, stalledGet, throttledGet, waitFor } from '../helpers/http.ts';
import { writeBulkHotspots } from '../helpers/parquet.ts';
import { CHAIN } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const DAYS = 10;
const ROWS_PER_DAY = 10_000;
const day = (d: number) => `2025-08-${String(d).padStart(2, '0')}`;
const dayFile = (d: number) => path.join(dir, `hotspots/date=${day(d)}/a.parquet`);
const LONG = `/api/v1/hotspots?from=${day(1)}&to=${day(DAYS + 1)}&format=csv`;

let dir: string;
beforeAll(async () => {
  dir = await tempDir();
  for (let d = 1; d <= DAYS; d++) await writeBulkHotspots(dayFile(d), day(d), ROWS_PER_DAY, 3);
  await writeChain(dir, 'hotspots', CHAIN);
});

/** One group per day, and a write-ahead of about one group: a paused client soon stops production. */
const SMALL_AHEAD = { GROUP_ROWS: String(ROWS_PER_DAY), EXTRACT_AHEAD_MB: '1' };

async function withServer(env: Record<string, string>, run: (s: TestServer) => Promise<void>): Promise<void> {
  const s = await startServer(dir, env);
  try {
    await run(s);
  } finally {
    await s.close();
  }
}

const groupFiles = async () => (await readdir(path.join(dir, '.tmp'), { recursive: true })).filter((f) => path.basename(String(f)).startsWith('extract-'));

/** Stalled GETs of the long window, resolved once each has its headers. */
async function stalledReaders(s: TestServer, n: number, accept?: string): Promise<{ clients: http.ClientRequest[]; responses: http.IncomingMessage[] }> {
  const clients: http.ClientRequest[] = [];
  // A columnar type is asked for by Accept, without format=csv.
  const url = accept ? `${s.url}${LONG.replace('&format=csv', '')}` : `${s.url}${LONG}`;
  const headers = accept ? { ...s.auth, accept } : s.auth;
  const responses = await Promise.all(Array.from({ length: n }, () => new Promise<http.IncomingMessage>((resolve) => clients.push(stalledGet(url, headers, resolve)))));
  return { clients, responses };
}

describe('capacity belongs to the engine, not to the clients’ networks', () => {
  it('stalled readers of long extracts hold no connection while idle, and a one-day request from anyone else is answered', async () => {
    await withServer({ ...SMALL_AHEAD, DUCKDB_CONNECTIONS: '4', EXTRACT_CONNECTIONS: '2' }, async (s) => {
      const { clients } = await stalledReaders(s, 2);
      try {
        // Production stops at the write-ahead bound and gives the connections back.
        expect(await waitFor(() => s.engine.busy === 0 && s.engine.queuedBulk === 0, 10_000)).toBe(true);
        const files = await groupFiles();
        expect(files.length).toBeLessThanOrEqual(2 * 3);
        // Were a stalled reader still holding a connection, this request would wait behind it for good.
        const r = await rawGet(`${s.url}/api/v1/hotspots?from=${day(3)}&to=${day(4)}&format=csv`, { headers: s.auth });
        expect([r.status, r.complete, Number(r.headers['x-returned'])]).toEqual([200, true, ROWS_PER_DAY]);
        // The response's connection is released just after its last byte: wait for that, then see nobody took one.
        expect(await waitFor(() => s.engine.busy === 0 && s.engine.queuedBulk === 0, 10_000)).toBe(true);
      } finally {
        clients.forEach((c) => c.destroy());
      }
    });
  }, 60_000);

  it('a steady slow reader whose download lasts far past QUERY_TIMEOUT_MS receives every row', async () => {
    // The engine's part (eight groups of 10,000 rows) takes well under a second on a quiet machine;
    // the budget leaves room for a loaded one, and the download lasts about three budgets.
    await withServer({ GROUP_ROWS: String(ROWS_PER_DAY), EXTRACT_AHEAD_MB: '4', QUERY_TIMEOUT_MS: '5000' }, async (s) => {
      const url = `${s.url}/api/v1/hotspots?from=${day(1)}&to=${day(9)}&format=csv`;
      const r = await throttledGet(url, { headers: s.auth, bytesPerSecond: 700_000 });
      expect([r.status, r.complete, Number(r.headers['x-returned'])]).toEqual([200, true, 8 * ROWS_PER_DAY]);
      expect(r.ms).toBeGreaterThan(10_000);
      expect(await waitFor(() => s.engine.busy === 0)).toBe(true);
    });
  }, 60_000);

  it('a stalled reader is cut after SEND_IDLE_TIMEOUT_MS, not before, and its temp files and budget are given back', async () => {
    await withServer({ ...SMALL_AHEAD, SEND_IDLE_TIMEOUT_MS: '1500' }, async (s) => {
      const { clients, responses } = await stalledReaders(s, 1);
      const since = performance.now();
      const budget = s.context.extract.tempBudget;
      try {
        expect(budget.usedBytes).toBeGreaterThan(0);
        const metrics = await (await fetch(`${s.url}/metrics`)).text();
        expect(Number(/^fire_api_temp_reserved_bytes (\d+)$/m.exec(metrics)?.[1])).toBe(budget.usedBytes);
        // A paused client cannot see the cut until it reads again: watch the server give everything back.
        expect(await waitFor(() => budget.usedBytes === 0, 15_000)).toBe(true);
        expect(performance.now() - since).toBeGreaterThanOrEqual(1400);
        expect(await waitFor(() => s.engine.busy === 0)).toBe(true);
        expect(await groupFiles()).toEqual([]);
        const res = responses[0]!;
        const closed = new Promise<void>((resolve) => res.once('close', resolve));
        res.on('data', () => undefined);
        res.resume();
        await closed;
        expect(res.complete).toBe(false);
      } finally {
        clients.forEach((c) => c.destroy());
      }
    });
  }, 60_000);

  // Arrow rather than Parquet: a paused client's socket buffers would hold a whole compressed Parquet year of this size.
  it.each([['CSV', undefined], ['Arrow', 'application/vnd.apache.arrow.stream']])('a file swapped by rename mid-stream for one of the same row count never yields a clean 200 (%s)', async (_name, accept) => {
    await withServer(SMALL_AHEAD, async (s) => {
      const { clients, responses } = await stalledReaders(s, 1, accept);
      const res = responses[0]!;
      try {
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toBe(accept ?? 'text/csv; charset=utf-8');
        // The last day is far beyond the write-ahead of a paused client: not read yet.
        const last = dayFile(DAYS);
        const swap = path.join(path.dirname(last), '_swap.parquet');
        // Another spacing per case: each swap brings content (and a data version) not seen before.
        await writeBulkHotspots(swap, day(DAYS), ROWS_PER_DAY, 3, accept ? 3 : 2);
        await rename(swap, last);
        const closed = new Promise<void>((resolve) => res.once('close', resolve));
        res.on('data', () => undefined);
        res.resume();
        await closed;
        expect(res.complete).toBe(false);
        expect(await waitFor(() => s.engine.busy === 0)).toBe(true);
        // The next request checks the new file and answers for it.
        const again = await rawGet(`${s.url}${LONG}`, { headers: s.auth });
        expect([again.status, again.complete]).toEqual([200, true]);
        expect(again.headers['x-data-version']).not.toBe(res.headers['x-data-version']);
      } finally {
        clients.forEach((c) => c.destroy());
      }
    });
  }, 60_000);

  it('a spent TEMP_DIR budget is a quick 503 with Retry-After before the first byte, never a stall', async () => {
    await withServer({ ...SMALL_AHEAD, TEMP_DIR_MAX_MB: '1.5', RETRY_AFTER_SECONDS: '7' }, async (s) => {
      const { clients } = await stalledReaders(s, 1);
      try {
        // Production has stopped at the write-ahead bound: what the reader holds no longer moves.
        expect(await waitFor(() => s.engine.busy === 0 && s.engine.queuedBulk === 0, 10_000)).toBe(true);
        const held = s.context.extract.tempBudget.usedBytes;
        const refused = await rawGet(`${s.url}${LONG}`, { headers: s.auth });
        expect(refused.status).toBe(503);
        // Nothing was given back yet: the configured figure, not a guess.
        expect(refused.headers['retry-after']).toBe('7');
        // Refused while the stalled reader still holds its room: the request did not wait for room to come back.
        expect(held).toBeGreaterThan(0);
        expect(s.context.extract.tempBudget.usedBytes).toBe(held);
        expect(clients.every((c) => !c.destroyed)).toBe(true);
        // A window small enough to fit what is left is still served.
        const small = await rawGet(`${s.url}/api/v1/hotspots?from=${day(2)}T00:00Z&to=${day(2)}T00:10Z&format=csv`, { headers: s.auth });
        expect([small.status, small.complete]).toEqual([200, true]);
      } finally {
        clients.forEach((c) => c.destroy());
      }
    });
  }, 60_000);
});
