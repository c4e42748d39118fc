import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeChain } from '../../helpers/fixtures.ts';
import { writeSpreadHotspots } from '../../helpers/parquet.ts';
import { CHAIN } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

/**
 * Days of more groups than one result chunk holds (2,048), a limit that falls inside the second
 * chunk: the cut is found across chunks (and the window's parts), and the pages walked by
 * `next.from` give each group once.
 */

const DAYS = { '2025-08-01': 3000, '2025-08-02': 500, '2025-08-03': 2500 } as const;
const LIMIT = 4000;
const URL = '/api/v1/hotspots/aggregate?interval=day&groupBy=grid&cell=0.01';

let server: TestServer;
beforeAll(async () => {
  const dir = await tempDir();
  for (const [day, rows] of Object.entries(DAYS)) await writeSpreadHotspots(path.join(dir, `hotspots/date=${day}/a.parquet`), day, rows);
  await writeChain(dir, 'hotspots', CHAIN);
  server = await startServer(dir, { AGGREGATE_CACHE_MB: '0', AGGREGATE_ROW_LIMIT: String(LIMIT) });
}, 60_000);
afterAll(() => server?.close());

interface Page {
  features: { properties: { bucket: string; cellLon: number; cellLat: number } }[];
  meta: { returned: number; truncated: boolean; next: { from: string } | null };
}

describe('an aggregate cut across result chunks', () => {
  it('ends before the first bucket that does not fit whole, and the pages walked by next give each group once', async () => {
    const pages: Page[] = [];
    for (let from: string | undefined = '2025-08-01'; from !== undefined; ) {
      const r = await server.get(`${URL}&from=${encodeURIComponent(from)}&to=2025-08-04`);
      expect(r.status).toBe(200);
      const page = (await r.json()) as Page;
      expect([r.headers.get('x-returned'), r.headers.get('x-truncated')]).toEqual([String(page.meta.returned), String(page.meta.truncated)]);
      pages.push(page);
      from = page.meta.next?.from;
      expect(pages.length).toBeLessThanOrEqual(3);
    }
    // 3,000 + 500 fit under 4,000 (the cut at group 3,500, in the second chunk); 2,500 more would not.
    expect(pages.map((p) => [p.meta.returned, p.features.length, p.meta.truncated, p.meta.next?.from ?? null])).toEqual([
      [3500, 3500, true, '2025-08-03T00:00:00Z'],
      [2500, 2500, false, null],
    ]);
    const groups = pages.flatMap((p) => p.features.map((f) => `${f.properties.bucket} ${f.properties.cellLon} ${f.properties.cellLat}`));
    expect(new Set(groups).size).toBe(groups.length);
    const perDay = Object.fromEntries(Object.keys(DAYS).map((day) => [day, groups.filter((g) => g.startsWith(day)).length]));
    expect(perDay).toEqual(DAYS);
  });
});
