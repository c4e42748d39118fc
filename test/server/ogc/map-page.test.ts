import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium as playwright } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { chromium, needService } from '../../helpers/services.ts';

// The pages of /api/v1/ogc in headless Chromium, as a person uses them: open a page (no key needed
// for it), type the key once, see the map, the table and the next page. The screenshot is kept.
const CHROMIUM = chromium();
const ARTIFACTS = path.resolve(import.meta.dirname, '../../../var/test-artifacts');

let server: TestServer;
beforeAll(async () => {
  const dataDir = await writeSampleData();
  await writeBulkHotspots(path.join(dataDir, 'hotspots/date=2025-08-05/a.parquet'), '2025-08-05', 120, 2);
  server = await startServer(dataDir);
}, 60_000);
afterAll(() => server.close());

async function withTab<T>(executablePath: string, use: (tab: import('playwright-core').Page, requests: string[]) => Promise<T>): Promise<T> {
  const browser = await playwright.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const tab = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const requests: string[] = [];
    tab.on('request', (r) => requests.push(r.url()));
    return await use(tab, requests);
  } finally {
    await browser.close();
  }
}

describe('the OGC API pages in Chromium', () => {
  it('an items page asks for the key once, then maps the features of the page, lists them and links the next page; the key never enters a URL', { timeout: 90_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withTab(executablePath, async (tab, requests) => {
      const page = `${server.url}/api/v1/ogc/collections/hotspots/items?f=html&limit=50&datetime=2025-08-05T00:00:00Z/2025-08-05T23:59:59Z`;
      const shell = await tab.goto(page);
      expect(shell!.status()).toBe(200);
      await tab.fill('#key', server.key);
      await tab.click('#key-form button');
      await tab.waitForSelector('body[data-features-drawn]', { timeout: 30_000 });
      expect(await tab.getAttribute('body', 'data-features-drawn')).toBe('50');
      // What is on the screen: one marker per feature (the world outline is not interactive), 20 table rows.
      expect(await tab.locator('.leaflet-overlay-pane path.leaflet-interactive').count()).toBe(50);
      await tab.waitForFunction(() => document.querySelectorAll('.leaflet-overlay-pane path:not(.leaflet-interactive)').length > 0, undefined, { timeout: 10_000 });
      expect(await tab.locator('tbody tr').count()).toBe(20);
      expect(await tab.locator('pre').first().textContent()).toContain('format=csv');
      await mkdir(ARTIFACTS, { recursive: true });
      await tab.screenshot({ path: path.join(ARTIFACTS, 'ogc-items-map.png'), fullPage: true });
      // The next page opens without asking again (sessionStorage), with the rest of the day.
      await tab.click('a[rel="next"]');
      await tab.waitForSelector('body[data-features-drawn]', { timeout: 30_000 });
      expect(Number(await tab.getAttribute('body', 'data-features-drawn'))).toBeGreaterThan(0);
      expect(requests.filter((u) => u.includes(server.key))).toEqual([]);
    });
  });

  it('a feature page maps the feature, lists its properties and links back to its collection', { timeout: 60_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withTab(executablePath, async (tab) => {
      await tab.goto(`${server.url}/api/v1/ogc/collections/hotspots/items/h1?f=html`, { waitUntil: 'load' });
      await tab.fill('#key', server.key);
      await tab.click('#key-form button');
      await tab.waitForSelector('a[rel="collection"]');
      expect(await tab.textContent('h1')).toBe('h1');
      expect(await tab.locator('tbody tr').count()).toBe(1);
      expect(await tab.getAttribute('a[rel="collection"]', 'href')).toBe('/api/v1/ogc/collections/hotspots?f=html');
    });
  });

  it('the landing page lists its links; a wrong key is asked for again', { timeout: 60_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withTab(executablePath, async (tab) => {
      await tab.goto(`${server.url}/api/v1/ogc`, { waitUntil: 'load' });
      await tab.fill('#key', 'frk_not_a_key');
      await tab.click('#key-form button');
      await tab.waitForFunction(() => !(document.getElementById('key-form') as HTMLFormElement).hidden && document.getElementById('status')!.textContent !== 'Loading…');
      expect(await tab.textContent('#status')).toMatch(/not valid/);
      await tab.fill('#key', server.key);
      await tab.click('#key-form button');
      await tab.waitForSelector('a[rel="data"]');
      expect(await tab.getAttribute('a[rel="data"]', 'href')).toBe('/api/v1/ogc/collections?f=html');
    });
  });
});
