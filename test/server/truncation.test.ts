import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../datasets/hotspots.ts';
import { hotspot, tempDir } from '../helpers/fixtures.ts';
import { parseCsv } from '../helpers/sample-data.ts';
import { writeBulkHotspots, writeParquet } from '../helpers/parquet.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const ROW_LIMIT = 250;
let server: TestServer;
let total = 0;

beforeAll(async () => {
  const dir = await tempDir();
  // 7 days, 7 rows sharing each instant, instants 60 s apart: cuts land inside days and across partitions.
  for (let day = 1; day <= 7; day++) {
    const date = `2025-07-0${day}`;
    const rows = 300 + day * 37;
    total += rows;
    await writeBulkHotspots(path.join(dir, `hotspots/date=${date}/part-0.parquet`), date, rows, 7, 60);
  }
  // A late file in one partition, interleaving with the first file's instants.
  await writeParquet(path.join(dir, 'hotspots/date=2025-07-03/late.parquet'), hotspots, [
    hotspot('late-1', '2025-07-03T00:01:00Z'),
    hotspot('late-2', '2025-07-03T00:01:00Z'),
  ]);
  total += 2;
  server = await startServer(dir, { ROW_LIMIT: String(ROW_LIMIT) });
});
afterAll(() => server.close());

async function walk(format: 'csv' | 'geojson', from: string, to: string) {
  const seen: string[] = [];
  let pages = 0;
  for (let next: string | null = from; next; pages++) {
    const r: Response = await server.get(`/api/v1/hotspots?from=${encodeURIComponent(next)}&to=${to}${format === 'csv' ? '&format=csv' : ''}`);
    expect(r.status).toBe(200);
    if (format === 'csv') {
      const rows = parseCsv(await r.text()).slice(1);
      expect(rows.length).toBe(Number(r.headers.get('x-returned')));
      expect(rows.length).toBeLessThanOrEqual(ROW_LIMIT);
      seen.push(...rows.map((row) => row[0]!));
      next = r.headers.get('x-next-from');
      expect(r.headers.get('x-truncated')).toBe(String(next !== null));
    } else {
      const body = (await r.json()) as any;
      expect(body.features.length).toBe(body.meta.returned);
      const last = body.features.at(-1)?.properties.acquiredAtUtc;
      if (body.meta.next) expect(Date.parse(last)).toBeLessThan(Date.parse(body.meta.next.from));
      seen.push(...body.features.map((f: any) => f.id));
      next = body.meta.next?.from ?? null;
      expect(body.meta.truncated).toBe(next !== null);
    }
  }
  return { seen, pages };
}

describe('truncation on a time boundary with continuation', () => {
  for (const format of ['csv', 'geojson'] as const) {
    it(`walking next.from returns every row exactly once, in order (${format})`, async () => {
      const { seen, pages } = await walk(format, '2025-07-01', '2025-07-08');
      expect(seen.length).toBe(total);
      expect(new Set(seen).size).toBe(total);
      expect(pages).toBeGreaterThan(Math.ceil(total / ROW_LIMIT) - 1);
      expect(seen).toContain('late-2');
      // Order is (time, id): the late rows at 00:01 follow the seven bulk rows of that instant.
      const at = seen.indexOf('2025-07-03-00000013');
      expect(seen.slice(at, at + 4)).toEqual(['2025-07-03-00000013', 'late-1', 'late-2', '2025-07-03-00000014']);
    });
  }

  it('a cut never splits an instant: the next page starts with the rest of no instant already served', async () => {
    const r = await server.get(`/api/v1/hotspots?from=2025-07-01&to=2025-07-08`);
    const body = (await r.json()) as any;
    expect(body.meta).toMatchObject({ truncated: true, rowLimit: ROW_LIMIT, next: { to: '2025-07-08T00:00:00Z' } });
    expect(body.meta.returned).toBe(245); // 35 whole instants of 7 rows fit in 250
    expect(body.meta.next.from).toBe('2025-07-01T00:35:00Z');
  });

  it('when more rows than the limit share the first instant, returns the first ROW_LIMIT of them and next null', async () => {
    const dir = await tempDir();
    await writeBulkHotspots(path.join(dir, 'hotspots/date=2025-07-01/a.parquet'), '2025-07-01', 40, 30, 60);
    const small = await startServer(dir, { ROW_LIMIT: '20' });
    try {
      const body = (await (await small.get(`/api/v1/hotspots?from=2025-07-01&to=2025-07-02`)).json()) as any;
      expect(body.meta).toMatchObject({ truncated: true, returned: 20, next: null });
      expect(body.features.map((f: any) => f.id)).toEqual(Array.from({ length: 20 }, (_, i) => `2025-07-01-${String(i).padStart(8, '0')}`));
    } finally {
      await small.close();
    }
  });
});
