import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Lease } from '../../queries/engine/engine.ts';
import { EngineBusyError } from '../../queries/errors.ts';
import { atCapacity, heldRefusal, type Problem } from '../../server/http/problems.ts';
import { captureLogs } from '../helpers/logs.ts';
import { tempDir, writeChain } from '../helpers/fixtures.ts';
import { writeBulkHotspots } from '../helpers/parquet.ts';
import { CHAIN } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const DAY = '/api/v1/hotspots?from=2025-08-01&to=2025-08-02&format=csv';

async function writeData(): Promise<string> {
  const dir = await tempDir();
  await writeBulkHotspots(path.join(dir, 'hotspots/date=2025-08-01/a.parquet'), '2025-08-01', 2_000, 2);
  await writeChain(dir, 'hotspots', CHAIN);
  return dir;
}

/** Every connection of `s` held by the test, and `queued` more requests waiting: the next one is refused. */
async function saturate(s: TestServer, queued: number): Promise<() => Promise<void>> {
  const held: Lease[] = [];
  for (let i = 0; i < s.engine.size; i++) held.push(await s.engine.acquire());
  const waiting = Array.from({ length: queued }, () => s.engine.acquire());
  expect(s.engine.saturated).toBe(true);
  return async () => {
    for (const h of held) h.release();
    for (const w of waiting) (await w).release();
  };
}

let dir: string;
let server: TestServer | null = null;
let free: (() => Promise<void>) | null = null;
beforeAll(async () => {
  dir = await writeData();
});
afterEach(async () => {
  await free?.();
  await server?.close();
  free = null;
  server = null;
});

describe('overload: refusals are quick, cheap and say when to come back', () => {
  it('a queue-full 503 gives Retry-After from the pace the queue drains at, not RETRY_AFTER_SECONDS', async () => {
    server = await startServer(dir, { DUCKDB_CONNECTIONS: '1', DUCKDB_QUEUE_MAX: '2', RETRY_AFTER_SECONDS: '60', REFUSAL_HOLD_MS: '0' });
    // One hand-out (the test's own) in the meter: at most one a second, 2 waiting + this one = 3 ahead. How the pace
    // turns into seconds is drain-meter.test.ts's subject (a fixed clock); here: the pace, not RETRY_AFTER_SECONDS.
    free = await saturate(server, 2);
    const r = await server.get(DAY);
    expect(r.status).toBe(503);
    // A header's value, not a time measured: below RETRY_AFTER_SECONDS, so it came from the pace.
    const retryAfter = Number(r.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(3);
    expect(retryAfter).toBeLessThan(60);
    expect(((await r.json()) as { detail: string }).detail).toMatch(/capacity/);
  });

  it('at capacity a request is refused before any file is listed (a missing dataset folder is not even seen)', async () => {
    const empty = await tempDir();
    await writeChain(empty, 'hotspots', CHAIN);
    await rm(path.join(empty, 'hotspots'), { recursive: true, force: true });
    server = await startServer(empty, { DUCKDB_CONNECTIONS: '1', DUCKDB_QUEUE_MAX: '0', REFUSAL_HOLD_MS: '0' });
    const looked = await server.get(DAY);
    expect(looked.status).toBe(503);
    expect(((await looked.json()) as { detail: string }).detail).toMatch(/could not be read/);
    free = await saturate(server, 0);
    const refused = await server.get(DAY);
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/capacity/);
  });

  it('with renderings on, only a window they may answer goes on to look at capacity: Parquet, or a dataset never rendered, is refused first', async () => {
    const empty = await tempDir();
    await writeChain(empty, 'hotspots', CHAIN);
    await rm(path.join(empty, 'hotspots'), { recursive: true, force: true });
    server = await startServer(empty, { DUCKDB_CONNECTIONS: '1', DUCKDB_QUEUE_MAX: '0', REFUSAL_HOLD_MS: '0', RENDER_CACHE_MB: '64' });
    free = await saturate(server, 0);
    const detail = async (r: Response) => [r.status, ((await r.json()) as { detail: string }).detail] as const;
    // CSV of hotspots may come from renderings: it looks (and finds no folder).
    expect(await detail(await server.get(DAY))).toEqual([503, expect.stringMatching(/could not be read/)]);
    // Neither Parquet nor fire danger is ever rendered: refused before anything is listed.
    expect(await detail(await server.get('/api/v1/hotspots?from=2025-08-01&to=2025-08-02', { headers: { accept: 'application/vnd.apache.parquet' } }))).toEqual([503, expect.stringMatching(/capacity/)]);
    expect(await detail(await server.get('/api/v1/fire-danger?from=2025-08-01&to=2025-08-02&format=csv'))).toEqual([503, expect.stringMatching(/capacity/)]);
  });

  it('at capacity a client holding the current version still gets its 304 (no connection needed)', async () => {
    server = await startServer(dir, { DUCKDB_CONNECTIONS: '1', DUCKDB_QUEUE_MAX: '0', REFUSAL_HOLD_MS: '0' });
    const first = await server.get(DAY);
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    const etag = first.headers.get('etag')!;
    free = await saturate(server, 0);
    expect((await server.get(DAY, { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await server.get(DAY)).status).toBe(503);
  });

  it('Retry-After is the drain estimate within [1, RETRY_AFTER_SECONDS], and RETRY_AFTER_SECONDS when no pace is known', () => {
    const retry = (drainSeconds: number | null) => atCapacity(new EngineBusyError(drainSeconds), 60).headers['retry-after'];
    expect(retry(null)).toBe('60');
    expect(retry(7)).toBe('7');
    expect(retry(0)).toBe('1');
    expect(retry(3600)).toBe('60');
  });

  it('a queue-full refusal is held for REFUSAL_HOLD_MS, at most the drain time; Retry-After counts from when it is sent', async () => {
    server = await startServer(dir, { DUCKDB_CONNECTIONS: '1', DUCKDB_QUEUE_MAX: '2', RETRY_AFTER_SECONDS: '60', REFUSAL_HOLD_MS: '1500' });
    // As in the first test: 3 to 6 s to drain when refused, so the whole hold applies.
    free = await saturate(server, 2);
    const started = performance.now();
    const r = await server.get(DAY);
    expect(r.status).toBe(503);
    // Held (a lower bound holds on any machine); that the hold is capped is the next tests' subject.
    expect(performance.now() - started).toBeGreaterThanOrEqual(1400);
    const retryAfter = Number(r.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(2);
    expect(retryAfter).toBeLessThan(60);
  });

  it('a client that hangs up during the hold costs nothing: no warning, and the next client gets its answer', async () => {
    const logs = captureLogs();
    server = await startServer(dir, { DUCKDB_CONNECTIONS: '1', DUCKDB_QUEUE_MAX: '0', REFUSAL_HOLD_MS: '800', LOG_LEVEL: 'info' }, { logStream: logs.stream });
    free = await saturate(server, 0);
    const gone = new AbortController();
    const hungUp = server.get(DAY, { signal: gone.signal }).catch((e: unknown) => e);
    setTimeout(() => gone.abort(), 200);
    expect(await hungUp).toBeInstanceOf(Error);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const next = await server.get(DAY);
    expect(next.status).toBe(503);
    expect(Number(next.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(logs.lines().filter((l) => Number(l.level) >= 40).map((l) => l.msg)).toEqual([]);
  });

  it('the hold is the smaller of REFUSAL_HOLD_MS and the drain time, and none when the queue drains at once', async () => {
    // The hold is a timer: fake timers tell exactly when it fires, whatever the machine's load.
    vi.useFakeTimers();
    try {
      const held = async (drainSeconds: number | null, holdMs: number, fires: number) => {
        const answered: { problem?: Problem } = {};
        void heldRefusal(new EngineBusyError(drainSeconds), holdMs, 60).then((p) => (answered.problem = p));
        await vi.advanceTimersByTimeAsync(Math.max(0, fires - 1));
        if (fires > 0) expect(answered.problem).toBeUndefined();
        await vi.advanceTimersByTimeAsync(1);
        return answered.problem?.headers['retry-after'];
      };
      expect(await held(0, 2000, 0)).toBe('1');
      expect(await held(1, 2000, 1000)).toBe('1');
      // No pace known: the whole hold, and RETRY_AFTER_SECONDS as before.
      expect(await held(null, 300, 300)).toBe('60');
      expect(await held(10, 300, 300)).toBe('10');
    } finally {
      vi.useRealTimers();
    }
  });
});
