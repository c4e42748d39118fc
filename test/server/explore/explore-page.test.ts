import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { chromium, needService } from '../../helpers/services.ts';
import { exploreUrl, openView as open, settled, shownCount, withBrowser } from '../../helpers/explore-browser.ts';

// The explorer in headless Chromium, as a person uses it: open a view (no key needed for the
// page), type the key once, read the exact count, download. Counts are checked against the data
// endpoint itself (its pages walked), not against a number written here. Screenshots are kept.
const CHROMIUM = chromium();
const ARTIFACTS = path.resolve(import.meta.dirname, '../../../var/test-artifacts');
const ROW_LIMIT = 100;

let server: TestServer;
beforeAll(async () => {
  const dataDir = await writeSampleData();
  await writeBulkHotspots(path.join(dataDir, 'hotspots/date=2025-08-05/a.parquet'), '2025-08-05', 300, 2, 60);
  server = await startServer(dataDir, { ROW_LIMIT: String(ROW_LIMIT) });
}, 60_000);
afterAll(() => server.close());

/** The rows the data endpoint serves for these parameters: every page of the window walked. */
async function rowsServed(dataset: string, params: Record<string, string>): Promise<number> {
  let total = 0;
  for (let q = { ...params }; ; ) {
    const r = await server.get(`/api/v1/${dataset}?${new URLSearchParams({ ...q, format: 'csv' })}`);
    expect(r.status).toBe(200);
    await r.arrayBuffer();
    total += Number(r.headers.get('x-returned'));
    const next = r.headers.get('x-next-from');
    if (!next) return total;
    q = { ...q, from: next };
  }
}

const explore = (params: Record<string, string>) => exploreUrl(server.url, params);

async function openView(tab: Page, params: Record<string, string>): Promise<void> {
  await open(tab, explore(params), server.key);
  await settled(tab);
}

const VIEWS: { dataset: string; params: Record<string, string> }[] = [
  { dataset: 'hotspots', params: { from: '2025-08-01T00:00:00', to: '2025-08-03T00:00:00' } },
  { dataset: 'hotspots', params: { from: '2025-08-01T00:00:00', to: '2025-08-01T12:00:00', country: 'ES' } },
  { dataset: 'hotspots', params: { from: '2025-08-05T00:00:00', to: '2025-08-06T00:00:00' } },
  { dataset: 'hotspots', params: { from: '2025-08-05T02:00:00', to: '2025-08-05T04:30:00', bbox: '-8.05,39.0,-8.0,39.05' } },
  { dataset: 'burnt-areas', params: { from: '2025-08-01T00:00:00', to: '2025-09-01T00:00:00', bbox: '23.5,38,24.5,39' } },
  { dataset: 'sensor-readings', params: { from: '2025-08-01T00:00:00', to: '2025-08-02T00:00:00', simulated: 'false' } },
  { dataset: 'fire-danger', params: { from: '2025-08-01T00:00:00', to: '2025-08-03T00:00:00', model: 'effis-ecmwf', level: 'country' } },
];

describe('the explorer page in Chromium', () => {
  it('shows the exact row count of each view, as the data endpoint serves it, and the walk past ROW_LIMIT', { timeout: 180_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab, requests } = await open();
      for (const v of VIEWS) {
        await openView(tab, { dataset: v.dataset, ...v.params });
        const served = await rowsServed(v.dataset, v.params);
        expect(served).toBeGreaterThan(0);
        expect(await shownCount(tab), `${v.dataset} ${JSON.stringify(v.params)}`).toBe(served);
        expect(await tab.textContent('#row-word')).toBe(served === 1 ? 'row' : 'rows');
        expect(await tab.isVisible('#walk')).toBe(served > ROW_LIMIT);
        if (served > ROW_LIMIT) expect(await tab.textContent('#extract-command')).toContain(`fire-api extract ${v.dataset} --from 2025-08-05T00:00:00Z --to 2025-08-06T00:00:00Z`);
      }
      const origin = new URL(server.url).origin;
      expect(requests.filter((u) => new URL(u).origin !== origin)).toEqual([]);
      expect(requests.filter((u) => u.includes(server.key) || u.includes(encodeURIComponent(server.key)))).toEqual([]);
    });
  });
});

describe('the explorer page in Chromium: views, downloads, screens', () => {
  it('a view chosen with the form is in the URL, and that URL opened in another tab shows the same view', { timeout: 120_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab, requests } = await open();
      // Another dataset chosen: its own inputs (the grid's colour) and a new view in the URL.
      await openView(tab, { dataset: 'burnt-areas' });
      expect(await tab.locator('#colour').count()).toBe(0);
      await tab.selectOption('#dataset', 'hotspots');
      await settled(tab);
      expect(new URL(tab.url()).searchParams.get('dataset')).toBe('hotspots');
      expect(await tab.locator('#colour').count()).toBe(1);
      await tab.fill('#from', '2025-08-05T01:00:00');
      await tab.fill('#to', '2025-08-05T03:00:00');
      await tab.fill('#bbox', '-8.04,39.01,-8.0,39.08');
      await tab.fill('#filter-country', 'PT');
      await tab.click('#apply');
      await settled(tab);
      const shared = tab.url();
      const q = new URL(shared).searchParams;
      // A datetime-local input leaves out zero seconds: the same instant for the API.
      expect(Object.fromEntries(q)).toMatchObject({ dataset: 'hotspots', from: '2025-08-05T01:00', to: '2025-08-05T03:00', bbox: '-8.04,39.01,-8.0,39.08', country: 'PT' });
      const count = await shownCount(tab);
      expect(count).toBe(await rowsServed('hotspots', { from: '2025-08-05T01:00:00', to: '2025-08-05T03:00:00', bbox: '-8.04,39.01,-8.0,39.08', country: 'PT' }));
      // The rows are few: drawn one by one, each a marker.
      expect(await tab.getAttribute('body', 'data-layer')).toBe('detections');
      expect(Number(await tab.getAttribute('body', 'data-drawn'))).toBe(count);

      const other = await open();
      await openView(other.tab, Object.fromEntries(q));
      expect(await shownCount(other.tab)).toBe(count);
      for (const id of ['#dataset', '#from', '#to', '#bbox', '#filter-country']) expect(await other.tab.inputValue(id)).toBe(await tab.inputValue(id));
      expect(await other.tab.getAttribute('body', 'data-drawn')).toBe(String(count));
      expect([...requests, ...other.requests].filter((u) => u.includes(server.key))).toEqual([]);
    });
  });

  it('#download-csv saves the CSV endpoint\'s bytes for the view (GeoParquet and Arrow theirs, GeoJSON its features); a window past ROW_LIMIT is drawn as a grid', { timeout: 120_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab, requests } = await open();
      const view = { from: '2025-08-01T00:00', to: '2025-08-06T00:00', country: 'PT' };
      await openView(tab, { dataset: 'hotspots', ...view });
      const [download] = await Promise.all([tab.waitForEvent('download'), tab.click('#download-csv')]);
      const saved = await readFile((await download.path())!);
      const csv = await server.get(`/api/v1/hotspots?${new URLSearchParams({ ...view, format: 'csv' })}`);
      const endpoint = Buffer.from(await csv.arrayBuffer());
      expect(saved.length).toBeGreaterThan(100);
      expect(saved.equals(endpoint)).toBe(true);
      // Past ROW_LIMIT the download is one response, cut where the endpoint says the rest starts.
      expect(csv.headers.get('x-next-from')).toMatch(/^2025-08-05T/);
      expect(await tab.textContent('#download-note')).toBe(`Each download is one response: at most ${ROW_LIMIT} rows, cut on a time boundary; the rest of the view starts at its X-Next-From.`);
      expect(await tab.textContent('#csv-url')).toBe(`${server.url}/api/v1/hotspots?${new URLSearchParams({ ...view, format: 'csv' })}`);
      // GeoParquet and Arrow carry no clock: the same bytes as the endpoint's. GeoJSON's meta has the data's age: its features are the same.
      const endpointBytes = async (accept: string) => Buffer.from(await (await server.get(`/api/v1/hotspots?${new URLSearchParams(view)}`, { headers: { accept } })).arrayBuffer());
      const savedBytes = async (id: string) => {
        const [file] = await Promise.all([tab.waitForEvent('download'), tab.click(id)]);
        return readFile((await file.path())!);
      };
      expect((await savedBytes('#download-parquet')).equals(await endpointBytes('application/vnd.apache.parquet'))).toBe(true);
      expect((await savedBytes('#download-arrow')).equals(await endpointBytes('application/vnd.apache.arrow.stream'))).toBe(true);
      const features = (bytes: Buffer) => (JSON.parse(bytes.toString('utf8')) as { features: unknown[] }).features;
      const geojson = features(await savedBytes('#download-geojson'));
      expect(geojson).toHaveLength(ROW_LIMIT);
      expect(geojson).toEqual(features(await endpointBytes('application/geo+json')));
      // 300 rows on the 5th: more than one response holds, so the map shows aggregate cells.
      expect(await tab.getAttribute('body', 'data-layer')).toBe('grid');
      expect(Number(await tab.getAttribute('body', 'data-drawn'))).toBeGreaterThan(0);
      expect(await tab.locator('#chart rect.bar').count()).toBeGreaterThan(0);
      await mkdir(ARTIFACTS, { recursive: true });
      await tab.screenshot({ path: path.join(ARTIFACTS, 'explore-1280x800.png') });
      const origin = new URL(server.url).origin;
      expect(requests.filter((u) => new URL(u).origin !== origin)).toEqual([]);
    });
  });

  it('fits a phone-sized screen; a wrong key is refused in words and asked for again', { timeout: 90_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab } = await open({ width: 390, height: 844 });
      await tab.goto(explore({ dataset: 'burnt-areas', from: '2025-08-01T00:00:00', to: '2025-09-01T00:00:00' }));
      await tab.fill('#key', 'frk_not_a_key');
      await tab.click('#key-form button');
      await tab.waitForFunction(() => !(document.getElementById('key-form') as HTMLFormElement).hidden && /401/.test(document.getElementById('status')!.textContent ?? ''));
      expect(await tab.textContent('#status')).toMatch(/The key was not accepted \(401\)\. \S/);
      await tab.fill('#key', server.key);
      await tab.click('#key-form button');
      await settled(tab);
      expect(await shownCount(tab)).toBe(1);
      expect(await tab.textContent('#row-word')).toBe('row');
      expect(await tab.getAttribute('body', 'data-layer')).toBe('perimeters');
      expect(await tab.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await mkdir(ARTIFACTS, { recursive: true });
      await tab.screenshot({ path: path.join(ARTIFACTS, 'explore-phone.png'), fullPage: true });
    });
  });
});
