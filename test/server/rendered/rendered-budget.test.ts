import { mkdir, readdir, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../server/config.ts';
import { comparableAnswer } from '../../helpers/answer.ts';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { until } from '../../helpers/until.ts';

// The disk renderings hold (RENDER_CACHE_MB) against a server that renders nothing: a budget too
// small for a file's rendering is never a failed request, and /metrics counts what is on disk.
let plain: TestServer;
let tiny: TestServer;
let roomy: TestServer;
let dataDir: string;
beforeAll(async () => {
  const dir = (dataDir = await writeSampleData());
  await writeBulkHotspots(path.join(dir, 'hotspots/date=2025-08-05/a.parquet'), '2025-08-05', 30_000, 5, 3);
  plain = await startServer(dir);
  // 50 KB: far less than the day's CSV lines or Features (a few MB each).
  tiny = await startServer(dir, { RENDER_CACHE_MB: '0.05' });
  roomy = await startServer(dir, { RENDER_CACHE_MB: '64' });
}, 60_000);
afterAll(async () => {
  for (const s of [plain, tiny, roomy]) await s?.close();
});

const QUERIES = [
  '/api/v1/hotspots?format=csv&from=2025-08-05T04:00:00Z&to=2025-08-05T05:00:00Z',
  '/api/v1/hotspots?from=2025-08-05T04:00:00Z&to=2025-08-05T05:00:00Z',
  '/api/v1/hotspots?format=csv&from=2025-08-05T03:00:00Z&to=2025-08-05T09:00:00Z&country=ES',
];

const answer = async (s: TestServer, query: string) => comparableAnswer(await s.get(query));
const metric = async (s: TestServer, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(`${s.url}/metrics`)).text())?.[1]);
const renderings = (s: TestServer) => s.context.extract.renderings!;
/** What the renderings' folder holds, in bytes, and its files' names. */
async function onDisk(s: TestServer): Promise<{ names: string[]; bytes: number }> {
  const dir = renderings(s).dir;
  const names = await readdir(dir).catch(() => []);
  const sizes = await Promise.all(names.map(async (n) => (await stat(path.join(dir, n))).size));
  return { names, bytes: sizes.reduce((a, b) => a + b, 0) };
}

describe('renderings within their disk budget (RENDER_CACHE_MB)', () => {
  it('on by default, within 4,096 MB, rendering the files present at start; 0 turns them off', () => {
    expect(loadConfig({}).renderCacheBytes).toBe(4096 * 1024 * 1024);
    expect([loadConfig({}).renderAtStart, loadConfig({ RENDER_AT_START: 'false' }).renderAtStart]).toEqual([true, false]);
    expect(loadConfig({ RENDER_CACHE_MB: '0' }).renderCacheBytes).toBe(0);
  });

  it('a budget too small for a file\'s rendering: every window answered the old way, same bytes, nothing kept on disk', async () => {
    for (const q of QUERIES) {
      const a = await answer(tiny, q);
      expect([q, a.status]).toEqual([q, 200]);
      expect(a, q).toEqual(await answer(plain, q));
      // The rendering the window asked for was tried (its scratch copy or text past the budget) and let go.
      expect(await until(() => renderings(tiny).pending === 0)).toBe(true);
      expect(await answer(tiny, q), q).toEqual(await answer(plain, q));
      // Past the budget alone: not tried again.
      expect(renderings(tiny).pending).toBe(0);
    }
    expect(await onDisk(tiny)).toEqual({ names: [], bytes: 0 });
    for (const name of ['fire_api_renderings_bytes', 'fire_api_renderings_files', 'fire_api_renderings_hits_total', 'fire_api_renderings_failures_total']) {
      expect([name, await metric(tiny, name)]).toEqual([name, 0]);
    }
  });

  it('/metrics shows the bytes the renderings hold on disk and their budget, and nothing else is left there', async () => {
    for (const q of QUERIES) {
      await answer(roomy, q);
      expect(await until(() => renderings(roomy).pending === 0)).toBe(true);
      expect(await answer(roomy, q), q).toEqual(await answer(plain, q));
    }
    const disk = await onDisk(roomy);
    expect(disk.names.map((n) => path.extname(n)).sort()).toEqual(['.csv', '.geojson']);
    expect(disk.bytes).toBeGreaterThan(1_000_000);
    expect(await metric(roomy, 'fire_api_renderings_bytes')).toBe(disk.bytes);
    expect(await metric(roomy, 'fire_api_renderings_budget_bytes')).toBe(64 * 1024 * 1024);
    expect(await metric(plain, 'fire_api_renderings_budget_bytes')).toBe(0);
    expect(await metric(roomy, 'fire_api_renderings_hits_total')).toBeGreaterThanOrEqual(QUERIES.length);
  });

  it('a server that stops removes its renderings, not those of another app of the process sharing TEMP_DIR', async () => {
    const other = await startServer(dataDir, { RENDER_CACHE_MB: '64' });
    try {
      await answer(other, QUERIES[0]!);
      expect(await until(() => renderings(other).pending === 0)).toBe(true);
      expect((await onDisk(other)).names.length).toBe(1);
      expect(path.dirname(renderings(other).dir)).toBe(path.dirname(renderings(roomy).dir));
      expect(renderings(other).dir).not.toBe(renderings(roomy).dir);
    } finally {
      await other.close();
    }
    expect(await stat(renderings(other).dir).catch(() => null)).toBeNull();
    expect((await onDisk(roomy)).names.length).toBeGreaterThan(0);
  });

  it('a server starting removes the renderings an earlier process of the same pid left (not touched since this process started), not those of a live app', async () => {
    const root = path.dirname(renderings(roomy).dir);
    const stale = path.join(root, 'left-by-a-killed-process');
    await mkdir(stale, { recursive: true });
    await writeFile(path.join(stale, 'old.geojson'), 'x');
    await utimes(stale, new Date('2020-01-01T00:00:00Z'), new Date('2020-01-01T00:00:00Z'));
    const before = (await onDisk(roomy)).names.length;
    const next = await startServer(dataDir, { RENDER_CACHE_MB: '64' });
    await next.close();
    expect(await stat(stale).catch(() => null)).toBeNull();
    expect((await onDisk(roomy)).names.length).toBe(before);
    expect(before).toBeGreaterThan(0);
  });
});
