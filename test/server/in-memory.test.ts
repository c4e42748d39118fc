import { readdir, rename } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawGet, stalledGet, throttledGet, waitFor } from '../helpers/http.ts';
import { writeBulkHotspots } from '../helpers/parquet.ts';
import { writeSampleData } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { until } from '../helpers/until.ts';
import { comparableAnswer } from '../helpers/answer.ts';

// Small GeoJSON windows are read into memory by one statement; with IN_MEMORY_ROWS=0 the same
// windows are copied to temp files. Every response must be the same bytes either way. Past
// IN_MEMORY_MAX_MB (1.5 MB here) the bytes read are sent from a temp file, or from the renderings a
// piece at a time.
const LIMITS = { IN_MEMORY_MAX_MB: '1.5' };
const MAX_BYTES = 1.5 * 1024 * 1024;
let inMemory: TestServer;
let copied: TestServer;
let dir: string;
/**
 * The hotspots of 2025-08-05, two every 3 s from 00:00 to 02:00: 2 400 an hour (more than one DuckDB
 * chunk; about 1.2 MB of GeoJSON, sent from memory), 4 800 the day (about 2.5 MB, past IN_MEMORY_MAX_MB).
 */
const writeDay = (file: string, idPrefix?: string) => writeBulkHotspots(file, '2025-08-05', 4_800, 2, 3, 'ordered', idPrefix);
beforeAll(async () => {
  dir = await writeSampleData();
  await writeDay(path.join(dir, 'hotspots/date=2025-08-05/a.parquet'));
  inMemory = await startServer(dir, LIMITS);
  copied = await startServer(dir, { ...LIMITS, IN_MEMORY_ROWS: '0' });
}, 60_000);
afterAll(async () => {
  await inMemory?.close();
  await copied?.close();
});

const WINDOW = 'from=2025-08-01&to=2025-08-03';
const QUERIES = [
  `/api/v1/hotspots?${WINDOW}`,
  '/api/v1/hotspots?from=2025-08-05T01:00:00Z&to=2025-08-05T02:00:00Z',
  '/api/v1/hotspots?from=2025-08-05&to=2025-08-06',
  '/api/v1/hotspots?from=2025-08-05T01:00:00Z&to=2025-08-05T09:00:00Z&bbox=-8.05,39.0,-8.0,39.05',
  '/api/v1/hotspots?from=2025-08-01&to=2025-08-07&country=ES',
  '/api/v1/hotspots?from=2025-08-04&to=2025-08-05',
  `/api/v1/burnt-areas?${WINDOW}`,
  `/api/v1/fire-danger?${WINDOW}`,
  `/api/v1/fire-danger?${WINDOW}&model=effis-ecmwf&level=country`,
  '/api/v1/sensor-stations?',
  `/api/v1/sensor-readings?${WINDOW}`,
];
const FORMATS: [string, Record<string, string>, string][] = [
  ['geojson', {}, ''],
  ['csv', {}, '&format=csv'],
  ['parquet', { accept: 'application/vnd.apache.parquet' }, ''],
  ['arrow', { accept: 'application/vnd.apache.arrow.stream' }, ''],
];

/** What a response says, the one field allowed to differ (the chain's age moves with the clock) blanked. */
const answer = async (s: TestServer, query: string, headers: Record<string, string>) => comparableAnswer(await s.get(query, { headers }));

const ways = async (s: TestServer) => {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  return Object.fromEntries([...text.matchAll(/^fire_api_extracts_total\{dataset="hotspots",way="(\w+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
};

describe('small windows read into memory give the bytes of the temp-file copy', () => {
  it.each(FORMATS)('%s: every dataset, windows large and small, filtered and empty', async (_name, headers, suffix) => {
    for (const q of QUERIES) {
      const query = `${q}${suffix}`;
      const [a, b] = [await answer(inMemory, query, headers), await answer(copied, query, headers)];
      expect(a.status, query).toBe(200);
      expect(a, query).toEqual(b);
    }
  });

  it('the GeoJSON windows were read into memory by one server and copied by the other', async () => {
    const hour = '/api/v1/hotspots?from=2025-08-05T00:00:00Z&to=2025-08-05T01:00:00Z';
    const [before, beforeCopied] = [await ways(inMemory), await ways(copied)];
    const [a, b] = [await answer(inMemory, hour, {}), await answer(copied, hour, {})];
    expect(Number(a.returned)).toBeGreaterThan(2048);
    expect(a).toEqual(b);
    const [after, afterCopied] = [await ways(inMemory), await ways(copied)];
    expect((after.memory ?? 0) - (before.memory ?? 0)).toBe(1);
    expect(after.copy ?? 0).toBe(before.copy ?? 0);
    expect((afterCopied.copy ?? 0) - (beforeCopied.copy ?? 0)).toBe(1);
    expect(afterCopied.memory ?? 0).toBe(0);
  });

  it('a window read into memory whose Features pass IN_MEMORY_MAX_MB is sent from a temp file, the same bytes', async () => {
    const day = '/api/v1/hotspots?from=2025-08-05&to=2025-08-06';
    const before = await ways(inMemory);
    const [a, b] = [await answer(inMemory, day, {}), await answer(copied, day, {})];
    expect(a.body.length).toBeGreaterThan(MAX_BYTES);
    expect(a).toEqual(b);
    const after = await ways(inMemory);
    expect((after.copy ?? 0) - (before.copy ?? 0)).toBe(1);
    expect(after.memory ?? 0).toBe(before.memory ?? 0);
  });
});

describe('a window read into memory, as real readers take it', () => {
  const HOUR = '/api/v1/hotspots?from=2025-08-05T01:00:00Z&to=2025-08-05T02:00:00Z';

  it('a reader at 1 MB/s gets the same bytes as a fast one', async () => {
    const before = await ways(inMemory);
    const fast = Buffer.from(await (await inMemory.get(HOUR)).arrayBuffer());
    const slow = await throttledGet(`${inMemory.url}${HOUR}`, { headers: inMemory.auth, bytesPerSecond: 1_000_000 });
    expect([slow.status, slow.complete, slow.bytes]).toEqual([200, true, fast.length]);
    expect(fast.length).toBeGreaterThan(1_000_000);
    expect(slow.ms).toBeGreaterThan(1000);
    expect((await ways(inMemory)).memory! - (before.memory ?? 0)).toBe(2);
  });

  it('a reader hanging up mid-body leaves no connection busy, and the window is answered again', async () => {
    const cut = await rawGet(`${inMemory.url}${HOUR}`, { headers: inMemory.auth, abortAfterBytes: 200_000 });
    expect(cut.complete).toBe(false);
    expect(await waitFor(() => inMemory.engine.busy === 0, 10_000)).toBe(true);
    const again = await rawGet(`${inMemory.url}${HOUR}`, { headers: inMemory.auth });
    expect([again.status, again.complete]).toEqual([200, true]);
  });

  // Past IN_MEMORY_MAX_MB the bytes read into memory are written to a temp file (their connection held until then) and sent from it.
  const DAY = '/api/v1/hotspots?from=2025-08-05&to=2025-08-06';
  const leftFiles = async () => (await readdir(inMemory.context.extract.tempDir)).filter((f) => f.endsWith('.csv'));

  it('a window past IN_MEMORY_MAX_MB: a reader at 4 MB/s gets the bytes of a fast one', async () => {
    const fast = Buffer.from(await (await inMemory.get(DAY)).arrayBuffer());
    expect(fast.length).toBeGreaterThan(MAX_BYTES);
    const slow = await throttledGet(`${inMemory.url}${DAY}`, { headers: inMemory.auth, bytesPerSecond: 4_000_000 });
    expect([slow.status, slow.complete, slow.bytes]).toEqual([200, true, fast.length]);
  });

  it('a window past IN_MEMORY_MAX_MB, its reader hanging up after 100 kB: no connection busy, its temp file gone, answered again whole', async () => {
    // The temp file is there while a paused reader holds the response, its connection already back.
    const held = await new Promise<import('node:http').ClientRequest>((resolve) => {
      const req = stalledGet(`${inMemory.url}${DAY}`, inMemory.auth, () => resolve(req));
    });
    expect(await leftFiles()).toHaveLength(1);
    expect(inMemory.engine.busy).toBe(0);
    held.destroy();
    expect(await until(async () => (await leftFiles()).length === 0)).toBe(true);
    const cut = await rawGet(`${inMemory.url}${DAY}`, { headers: inMemory.auth, abortAfterBytes: 100_000 });
    expect(cut.complete).toBe(false);
    expect(await waitFor(() => inMemory.engine.busy === 0, 10_000)).toBe(true);
    expect(await until(async () => (await leftFiles()).length === 0)).toBe(true);
    const again = await rawGet(`${inMemory.url}${DAY}`, { headers: inMemory.auth });
    expect([again.status, again.complete]).toEqual([200, true]);
  });

  it('the file replaced while a paused reader holds the response: the whole response of the version it promised; the next request reads the new file', async () => {
    const ids = (body: string) => (JSON.parse(body) as { features: { id: string }[] }).features.map((f) => f.id);
    const before = ids(await (await inMemory.get(HOUR)).text());
    const chunks: Buffer[] = [];
    const complete = await new Promise<boolean>((resolve) => {
      const req = stalledGet(`${inMemory.url}${HOUR}`, inMemory.auth, (res) => {
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('close', () => resolve(res.complete));
        const file = path.join(dir, 'hotspots/date=2025-08-05/a.parquet');
        const swap = path.join(path.dirname(file), '_swap.parquet');
        void writeDay(swap, 'swapped')
          .then(() => rename(swap, file))
          .then(() => res.resume());
      });
      req.on('error', () => resolve(false));
    });
    expect(complete).toBe(true);
    expect(ids(Buffer.concat(chunks).toString())).toEqual(before);
    const after = ids(await (await inMemory.get(HOUR)).text());
    expect(after).toHaveLength(before.length);
    expect(after.every((id) => id.startsWith('swapped-'))).toBe(true);
  });
});

const metric = async (s: TestServer, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(`${s.url}/metrics`)).text())?.[1]);


describe('windows served from files rendered once (RENDER_CACHE_MB)', () => {
  // Started here, not with the others: it renders the files as they are now, once.
  let rendered: TestServer;
  beforeAll(async () => {
    rendered = await startServer(dir, { ...LIMITS, RENDER_CACHE_MB: '64' });
  });
  afterAll(() => rendered?.close());
  const HOUR = '/api/v1/hotspots?from=2025-08-05T00:00:00Z&to=2025-08-05T01:00:00Z';
  const ids = (body: string) => (JSON.parse(body) as { features: { id: string }[] }).features.map((f) => f.id);
  /** Asks `query` until it is answered from renderings (its files rendered in the background after a first, old-way answer). */
  const renderedAnswer = async (query: string) => {
    let hit: Awaited<ReturnType<typeof answer>> | null = null;
    const served = await until(async () => {
      const hits = await metric(rendered, 'fire_api_renderings_hits_total');
      const a = await answer(rendered, query, {});
      if ((await metric(rendered, 'fire_api_renderings_hits_total')) > hits) hit = a;
      return hit !== null;
    });
    expect(served, query).toBe(true);
    return hit!;
  };

  it('every GeoJSON window, asked again once its files are rendered, gives the bytes of the copy; filtered windows the old way', async () => {
    // The copy's answers, asked once: the files do not change in this test.
    const copies = new Map<string, Awaited<ReturnType<typeof answer>>>();
    for (const q of QUERIES) {
      copies.set(q, await answer(copied, q, {}));
      expect(await answer(rendered, q, {}), q).toEqual(copies.get(q));
    }
    // The unfiltered hotspot windows over files (2025-08-04 has none: no query, nothing to render).
    for (const q of QUERIES.slice(0, 3)) {
      expect(await renderedAnswer(q), q).toEqual(copies.get(q));
    }
    const hits = await metric(rendered, 'fire_api_renderings_hits_total');
    for (const q of QUERIES) expect(await answer(rendered, q, {}), q).toEqual(copies.get(q));
    expect(await metric(rendered, 'fire_api_renderings_hits_total')).toBeGreaterThan(hits);
    expect(await metric(rendered, 'fire_api_renderings_files')).toBeGreaterThan(0);
    expect(await metric(rendered, 'fire_api_renderings_bytes')).toBeGreaterThan(0);
  });

  it('a rendered window is answered while every DuckDB connection is taken: it needs none', async () => {
    const expected = await renderedAnswer(HOUR);
    const leases = await Promise.all(Array.from({ length: rendered.engine.size }, () => rendered.engine.acquire()));
    try {
      expect(rendered.engine.busy).toBe(rendered.engine.size);
      expect(await answer(rendered, HOUR, {})).toEqual(expected);
    } finally {
      for (const l of leases) l.release();
    }
  });

  it('a file replaced between requests is never answered from its old rendering', async () => {
    const before = await renderedAnswer(HOUR);
    const file = path.join(dir, 'hotspots/date=2025-08-05/a.parquet');
    const swap = path.join(path.dirname(file), '_swap.parquet');
    await writeDay(swap, 'replaced');
    await rename(swap, file);
    const next = await answer(rendered, HOUR, {});
    expect(next.etag).not.toBe(before.etag);
    expect(ids(next.body).every((id) => id.startsWith('replaced-'))).toBe(true);
    const copy = await answer(copied, HOUR, {});
    expect(next).toEqual(copy);
    // Rendered again, under its new identity: the new file's bytes.
    expect(await renderedAnswer(HOUR)).toEqual(copy);
  });

  it('the file replaced while a paused reader holds a rendered response: that response whole, the next one the new file', async () => {
    const before = ids((await renderedAnswer(HOUR)).body);
    const hits = await metric(rendered, 'fire_api_renderings_hits_total');
    const chunks: Buffer[] = [];
    const complete = await new Promise<boolean>((resolve) => {
      const req = stalledGet(`${rendered.url}${HOUR}`, rendered.auth, (res) => {
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('close', () => resolve(res.complete));
        const file = path.join(dir, 'hotspots/date=2025-08-05/a.parquet');
        const swap = path.join(path.dirname(file), '_swap.parquet');
        void writeDay(swap, 'paused')
          .then(() => rename(swap, file))
          .then(() => res.resume());
      });
      req.on('error', () => resolve(false));
    });
    expect(complete).toBe(true);
    expect(await metric(rendered, 'fire_api_renderings_hits_total')).toBe(hits + 1);
    expect(ids(Buffer.concat(chunks).toString())).toEqual(before);
    const after = ids((await answer(rendered, HOUR, {})).body);
    expect(after).toHaveLength(before.length);
    expect(after.every((id) => id.startsWith('paused-'))).toBe(true);
  });
});
