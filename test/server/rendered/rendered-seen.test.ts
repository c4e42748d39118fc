import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { until } from '../../helpers/until.ts';
import { comparableAnswer } from '../../helpers/answer.ts';

// A file the background checks find after start-up is rendered before anyone asks for it, and
// only while no request waits for DuckDB.
let plain: TestServer;
let rendered: TestServer;
let dir: string;
beforeAll(async () => {
  dir = await writeSampleData();
  plain = await startServer(dir);
  rendered = await startServer(dir, { RENDER_CACHE_MB: '64', FILE_CHECK_INTERVAL_MS: '100' });
}, 60_000);
afterAll(async () => {
  await plain?.close();
  await rendered?.close();
});

const store = () => rendered.context.extract.renderings!;


const answer = async (s: TestServer, query: string) => comparableAnswer(await s.get(query));

describe('new files rendered when the background checks first see them', () => {
  it('rendered in both formats while no request waits, then its first window comes from the rendering', async () => {
    // Every connection held, as by requests being served: a new file is seen but not rendered.
    const leases = await Promise.all(Array.from({ length: rendered.engine.size }, () => rendered.engine.acquire()));
    try {
      await writeBulkHotspots(path.join(dir, 'hotspots/date=2025-08-06/a.parquet'), '2025-08-06', 5_000, 5, 3);
      expect(await until(() => store().pending > 0)).toBe(true);
      expect(store().files).toBe(0);
    } finally {
      for (const l of leases) l.release();
    }
    expect(await until(() => store().files === 2 && store().pending === 0)).toBe(true);
    for (const q of ['/api/v1/hotspots?from=2025-08-06T00:10:00Z&to=2025-08-06T00:40:00Z', '/api/v1/hotspots?format=csv&from=2025-08-06T00:10:00Z&to=2025-08-06T00:40:00Z&country=PT']) {
      const hits = store().hits;
      const a = await answer(rendered, q);
      expect(store().hits, q).toBe(hits + 1);
      expect(Number(a.returned)).toBeGreaterThan(100);
      expect(a, q).toEqual(await answer(plain, q));
    }
    expect(store().misses).toBe(0);
  });
});
