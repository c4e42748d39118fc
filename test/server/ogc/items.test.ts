import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeChain } from '../../helpers/fixtures.ts';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { CHAIN, writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

// Hotspots whose instants hold 25, 3 and 1 rows: pages of 7 are cut inside an instant (after the
// last row's key), on instant boundaries, and between days.
let server: TestServer;
let dataDir: string;
beforeAll(async () => {
  dataDir = await tempDir();
  await writeBulkHotspots(path.join(dataDir, 'hotspots/date=2025-08-01/a.parquet'), '2025-08-01', 100, 25);
  await writeBulkHotspots(path.join(dataDir, 'hotspots/date=2025-08-02/a.parquet'), '2025-08-02', 60, 3);
  await writeBulkHotspots(path.join(dataDir, 'hotspots/date=2025-08-03/a.parquet'), '2025-08-03', 20, 1);
  await writeChain(dataDir, 'hotspots', CHAIN);
  server = await startServer(dataDir, { ROW_LIMIT: '1000' });
}, 60_000);
afterAll(() => server.close());

type Page = { type: string; numberMatched?: number; numberReturned: number; links: { href: string; rel: string }[]; features: { id: string; properties: Record<string, unknown> }[] };
const ITEMS = '/api/v1/ogc/collections/hotspots/items';

/** Follows `next` links from `first`, returning every page (through the key, as a client would). */
async function walk(first: string): Promise<Page[]> {
  const pages: Page[] = [];
  for (let url: string | undefined = `${server.url}${first}`; url; ) {
    const r = await fetch(url, { headers: server.auth });
    expect(r.status, await r.clone().text()).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/geo+json');
    const page = (await r.json()) as Page;
    expect(r.headers.get('link')).toContain('rel="self"');
    expect(Number(r.headers.get('x-returned'))).toBe(page.numberReturned);
    expect(page.features).toHaveLength(page.numberReturned);
    pages.push(page);
    url = page.links.find((l) => l.rel === 'next')?.href;
    expect(pages.length).toBeLessThan(200);
  }
  return pages;
}

/** The ids of a window as the v1 CSV gives them, in order. */
async function csvIds(from: string, to: string): Promise<string[]> {
  const text = await (await server.get(`/api/v1/hotspots?from=${from}&to=${to}&format=csv`)).text();
  return text.trim().split('\n').slice(1).map((line) => line.split(',')[0]!);
}

describe('OGC API – Features items: keyset pages', () => {
  it('a walk with limit=7 returns every row of the CSV for the same window once, in order; no page holds more than 7', async () => {
    const pages = await walk(`${ITEMS}?limit=7&datetime=2025-08-01T00:00:00Z/2025-08-03T23:59:59Z`);
    const ids = pages.flatMap((p) => p.features.map((f) => f.id));
    expect(ids).toEqual(await csvIds('2025-08-01', '2025-08-04'));
    expect(ids).toHaveLength(180);
    expect(Math.max(...pages.map((p) => p.numberReturned))).toBe(7);
    expect(Math.min(...pages.map((p) => p.numberReturned))).toBeGreaterThan(0);
    // Inside the 25-row instants pages are full; on the 3-row instants a page ends on an instant.
    expect(pages[0]!.numberReturned).toBe(7);
    expect(pages.some((p) => p.numberReturned === 6)).toBe(true);
    expect(pages.at(-1)!.links.some((l) => l.rel === 'next')).toBe(false);
  });

  it('no datetime walks the whole collection; links repeat the parameters and are absolute to the request\'s origin', async () => {
    const pages = await walk(`${ITEMS}?limit=50&country=PT`);
    expect(pages.flatMap((p) => p.features.map((f) => f.id))).toEqual(await csvIds('2025-08-01', '2025-08-04'));
    const next = new URL(pages[0]!.links.find((l) => l.rel === 'next')!.href);
    expect(next.origin).toBe(server.url);
    expect([...next.searchParams.keys()].sort()).toEqual(['country', 'cursor', 'limit']);
  });

  it('an instant in datetime is that instant alone; an open start or end reaches the data\'s edge', async () => {
    const at = (await walk(`${ITEMS}?datetime=2025-08-02T00:00:01Z`)).flatMap((p) => p.features.map((f) => f.properties.acquiredAtUtc));
    expect(at).toEqual(['2025-08-02T00:00:01Z', '2025-08-02T00:00:01Z', '2025-08-02T00:00:01Z']);
    const open = (await walk(`${ITEMS}?limit=1000&datetime=2025-08-02T00:00:10Z/..`)).flatMap((p) => p.features.map((f) => f.id));
    expect(open).toEqual(await csvIds('2025-08-02T00:00:10Z', '2025-08-04'));
    const until = (await walk(`${ITEMS}?limit=1000&datetime=../2025-08-01T00:00:00Z`)).flatMap((p) => p.features);
    expect(until).toHaveLength(25);
  });

  it('numberMatched only when the first page holds every match', async () => {
    const whole = await walk(`${ITEMS}?limit=1000&datetime=../2025-08-01T00:00:00Z`);
    expect(whole).toHaveLength(1);
    expect(whole[0]!.numberMatched).toBe(25);
    const paged = await walk(`${ITEMS}?limit=10&datetime=../2025-08-01T00:00:00Z`);
    expect(paged.length).toBeGreaterThan(1);
    expect(paged.map((p) => p.numberMatched)).toEqual(paged.map(() => undefined));
  });

  it('files added while a walk goes on: no row twice, every row that was there once', async () => {
    const first = await walk(`${ITEMS}?limit=7&datetime=2025-08-01T00:00:00Z/2025-08-01T23:59:59Z`).then((p) => p.flatMap((x) => x.features.map((f) => f.id)));
    const r = await server.get(`${ITEMS}?limit=7&datetime=2025-08-01T00:00:00Z/2025-08-01T23:59:59Z`);
    const page = (await r.json()) as Page;
    // A file lands in the same day, with rows before and after the cursor, before the next page is asked for.
    await writeBulkHotspots(path.join(dataDir, 'hotspots/date=2025-08-01/b.parquet'), '2025-08-01', 10, 5, 2, 'ordered', 'late');
    const next = new URL(page.links.find((l) => l.rel === 'next')!.href);
    const rest = await walk(next.pathname + next.search);
    const ids = [...page.features.map((f) => f.id), ...rest.flatMap((p) => p.features.map((f) => f.id))];
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => !id.startsWith('late-'))).toEqual(first);
    // The new rows at or after the cursor's place in the order are in the walk; those before it are not.
    expect(ids.filter((id) => id.startsWith('late-')).length).toBeGreaterThan(0);
  });
});
