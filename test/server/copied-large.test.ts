import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { comparableAnswer } from '../helpers/answer.ts';
import { writeBulkHotspots } from '../helpers/parquet.ts';
import { writeSampleData } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

// A window of 60,000 rows (8 to 27 MB) written whole by COPY before its response and sent from its
// files a piece at a time, into buffers read into again once the socket has written them, against
// the same window streamed group by group: the same bytes.
let copied: TestServer;
let streamed: TestServer;
beforeAll(async () => {
  const dir = await writeSampleData();
  for (const day of ['2025-08-05', '2025-08-06']) await writeBulkHotspots(path.join(dir, `hotspots/date=${day}/a.parquet`), day, 30_000, 5, 3);
  copied = await startServer(dir, { RENDER_CACHE_MB: '0', IN_MEMORY_ROWS: '1000', GROUP_ROWS: '100000' });
  streamed = await startServer(dir, { RENDER_CACHE_MB: '0', GROUP_ROWS: '40000' });
}, 60_000);
afterAll(async () => {
  for (const s of [copied, streamed]) await s?.close();
});

const TWO_DAYS = '/api/v1/hotspots?from=2025-08-05&to=2025-08-07';
const copiedWay = async () => Number(/^fire_api_extracts_total\{dataset="hotspots",way="copy"\} (\d+)$/m.exec(await (await fetch(`${copied.url}/metrics`)).text())?.[1] ?? 0);

async function answer(s: TestServer, query: string) {
  const a = await comparableAnswer(await s.get(query, { headers: { 'accept-encoding': 'identity' } }));
  const { 'content-length': _length, 'transfer-encoding': _framing, ...headers } = a.headers;
  return { ...a, headers };
}

describe('large windows copied whole, then sent a piece at a time', () => {
  it('GeoJSON and CSV: the same answer as the window streamed group by group', async () => {
    for (const query of [TWO_DAYS, `${TWO_DAYS}&format=csv`, '/api/v1/hotspots?from=2025-08-05T12:00:00Z&to=2025-08-06T18:00:00Z&format=csv']) {
      const before = await copiedWay();
      const got = await answer(copied, query);
      expect(await copiedWay(), query).toBe(before + 1);
      expect(got.body.length, query).toBeGreaterThan(1024 * 1024);
      expect(got, query).toEqual(await answer(streamed, query));
    }
  });
});
