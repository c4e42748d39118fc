import { rename } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { answerFromRenderings, metric } from '../../helpers/renderings.ts';
import { comparableAnswer } from '../../helpers/answer.ts';

// CSV and filtered windows answered from files rendered once (RENDER_CACHE_MB) against a server that
// renders nothing: the same status, headers and bytes, before and after the files are rendered.
let plain: TestServer;
let rendered: TestServer;
let cutPlain: TestServer;
let cutRendered: TestServer;
let dir: string;
beforeAll(async () => {
  dir = await writeSampleData();
  await writeBulkHotspots(path.join(dir, 'hotspots/date=2025-08-05/a.parquet'), '2025-08-05', 30_000, 5, 3);
  plain = await startServer(dir);
  rendered = await startServer(dir, { RENDER_CACHE_MB: '64' });
  cutPlain = await startServer(dir, { ROW_LIMIT: '5000' });
  cutRendered = await startServer(dir, { ROW_LIMIT: '5000', RENDER_CACHE_MB: '64' });
}, 60_000);
afterAll(async () => {
  for (const s of [plain, rendered, cutPlain, cutRendered]) await s?.close();
});

const HOUR = '/api/v1/hotspots?format=csv&from=2025-08-05T04:00:00Z&to=2025-08-05T05:00:00Z';
const QUERIES = [
  HOUR,
  '/api/v1/hotspots?format=csv&from=2025-08-01&to=2025-08-03',
  '/api/v1/hotspots?format=csv&from=2025-08-05T23:00:00Z&to=2025-08-06T01:00:00Z',
  '/api/v1/hotspots?format=csv&from=2025-08-05&to=2025-08-06',
  '/api/v1/hotspots?format=csv&from=2025-08-05T03:00:00Z&to=2025-08-05T09:00:00Z&bbox=-8.05,39.0,-8.0,39.05',
  '/api/v1/hotspots?format=csv&from=2025-08-01&to=2025-08-07&country=ES',
  '/api/v1/hotspots?format=csv&from=2025-08-05T00:00:00Z&to=2025-08-05T12:00:00Z&bbox=-8.03,39.0,-8.0,39.05&country=pt',
  '/api/v1/hotspots?from=2025-08-05T03:00:00Z&to=2025-08-05T09:00:00Z&bbox=-8.05,39.0,-8.0,39.05',
  '/api/v1/hotspots?from=2025-08-01&to=2025-08-07&country=es',
  '/api/v1/hotspots?from=2025-08-05T01:00:00Z&to=2025-08-05T02:00:00Z&bbox=170,-90,-170,90',
];
/** A window over no file: always the old way. */
const OLD_WAY = ['/api/v1/hotspots?format=csv&from=2025-08-04&to=2025-08-05'];

const answer = async (s: TestServer, query: string) => comparableAnswer(await s.get(query));



const renderedAnswer = (query: string) => answerFromRenderings(rendered, query, answer);

const ids = (csv: string) => csv.trim().split('\n').slice(1).map((line) => line.split(',')[0]!);

describe('CSV and filtered windows from files rendered once (RENDER_CACHE_MB)', () => {
  it('every window, before and after its files are rendered, is the answer of a server that renders nothing', async () => {
    for (const q of [...QUERIES, ...OLD_WAY]) {
      const a = await answer(rendered, q);
      expect([q, a.status]).toEqual([q, 200]);
      expect(a, q).toEqual(await answer(plain, q));
    }
    for (const q of QUERIES) expect(await renderedAnswer(q), q).toEqual(await answer(plain, q));
    const hits = await metric(rendered, 'fire_api_renderings_hits_total');
    for (const q of OLD_WAY) expect(await answer(rendered, q), q).toEqual(await answer(plain, q));
    expect(await metric(rendered, 'fire_api_renderings_hits_total')).toBe(hits);
  });

  it('the filtered windows keep some rows and drop others', async () => {
    for (const q of QUERIES.slice(4, 9)) {
      const [filtered, all] = [Number((await answer(plain, q)).returned), Number((await answer(plain, q.replace(/&(bbox|country)=[^&]*/g, ''))).returned)];
      expect([q, filtered > 0 && filtered < all]).toEqual([q, true]);
    }
  });

  it('a file replaced between requests is never answered from its old rendering', async () => {
    const before = await renderedAnswer(HOUR);
    const file = path.join(dir, 'hotspots/date=2025-08-05/a.parquet');
    const swap = path.join(path.dirname(file), '_swap.parquet');
    await writeBulkHotspots(swap, '2025-08-05', 30_000, 5, 3, 'ordered', 'csv-replaced');
    await rename(swap, file);
    const next = await answer(rendered, HOUR);
    expect(next.etag).not.toBe(before.etag);
    expect(ids(next.body).length).toBeGreaterThan(100);
    expect(ids(next.body).every((id) => id.startsWith('csv-replaced-'))).toBe(true);
    expect(next).toEqual(await answer(plain, HOUR));
    expect(await renderedAnswer(HOUR)).toEqual(await answer(plain, HOUR));
  });

  it('a window over more rows than ROW_LIMIT is still cut, as by a server that renders nothing, and renders nothing', async () => {
    const day = '/api/v1/hotspots?format=csv&from=2025-08-05&to=2025-08-06';
    for (let i = 0; i < 3; i++) {
      const a = await answer(cutRendered, day);
      expect(a.next).toMatch(/^2025-08-05T/);
      expect(a).toEqual(await answer(cutPlain, day));
    }
    expect(await metric(cutRendered, 'fire_api_renderings_files')).toBe(0);
    expect(await metric(cutRendered, 'fire_api_renderings_hits_total')).toBe(0);
  });
});
