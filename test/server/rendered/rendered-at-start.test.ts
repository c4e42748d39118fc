import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { metric } from '../../helpers/renderings.ts';
import { until } from '../../helpers/until.ts';
import { comparableAnswer } from '../../helpers/answer.ts';

// Files present at start (RENDER_AT_START, on by default): the start-up checks hand each file they
// find good to the renderings, so a window's first request is already answered from them.
let plain: TestServer;
let atStart: TestServer;
let notAtStart: TestServer;
beforeAll(async () => {
  const dir = await writeSampleData();
  await writeBulkHotspots(path.join(dir, 'hotspots/date=2025-08-06/a.parquet'), '2025-08-06', 5_000, 5, 3);
  plain = await startServer(dir);
  const warm = { RENDER_CACHE_MB: '64', WARM_FILE_CHECKS: 'true' };
  atStart = await startServer(dir, warm);
  notAtStart = await startServer(dir, { ...warm, RENDER_AT_START: 'false' });
}, 60_000);
afterAll(async () => {
  for (const s of [plain, atStart, notAtStart]) await s?.close();
});

const store = (s: TestServer) => s.context.extract.renderings!;
const answer = async (s: TestServer, query: string) => comparableAnswer(await s.get(query));
const checked = (s: TestServer) => until(async () => (await metric(s, 'fire_api_file_checks_warming')) === 0);
const QUERIES = ['/api/v1/hotspots?from=2025-08-06T00:10:00Z&to=2025-08-06T00:40:00Z', '/api/v1/hotspots?format=csv&from=2025-08-06T00:10:00Z&to=2025-08-06T00:40:00Z&country=PT'];

describe('files present at start rendered before anyone asks for them', () => {
  it('in both formats once the start-up checks are done; the first windows come from the renderings, as a server that renders nothing answers them', async () => {
    expect(await checked(atStart)).toBe(true);
    expect(await until(() => store(atStart).pending === 0 && store(atStart).files >= 2)).toBe(true);
    for (const q of QUERIES) {
      const hits = store(atStart).hits;
      const a = await answer(atStart, q);
      expect(store(atStart).hits, q).toBe(hits + 1);
      expect(Number(a.returned)).toBeGreaterThan(100);
      expect(a, q).toEqual(await answer(plain, q));
    }
    expect([store(atStart).misses, store(atStart).failures]).toEqual([0, 0]);
  });

  it('not with RENDER_AT_START=false: files are rendered once asked for', async () => {
    expect(await checked(notAtStart)).toBe(true);
    expect([store(notAtStart).pending, store(notAtStart).files]).toEqual([0, 0]);
    const a = await answer(notAtStart, QUERIES[0]!);
    expect([store(notAtStart).hits, store(notAtStart).misses]).toEqual([0, 1]);
    expect(a).toEqual(await answer(plain, QUERIES[0]!));
  });
});
