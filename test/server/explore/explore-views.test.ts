import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fireApi } from '../../helpers/cli.ts';
import { tempDir, writeChain } from '../../helpers/fixtures.ts';
import { CHAIN, parseCsv, writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { chromium, needService } from '../../helpers/services.ts';
import { dragAcross, drawn, exploreServer, exploreUrl, openView, settled, showView, shownCount, withBrowser } from '../../helpers/explore-browser.ts';

// What each dataset's view draws, and how the page narrows it and says why it cannot show one.
const CHROMIUM = chromium();

let server: TestServer;
beforeAll(async () => {
  server = await exploreServer();
}, 60_000);
afterAll(() => server.close());

const show = (tab: Page, params: Record<string, string>, s = server) => showView(tab, s, params);

describe('the explorer\'s views in Chromium', () => {
  it('dragging across the counts narrows the window to those buckets; a detection opens its properties', { timeout: 90_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab } = await open();
      await show(tab, { dataset: 'hotspots', from: '2025-08-01T00:00', to: '2025-08-08T00:00' });
      expect(await tab.locator('#chart rect.bar').count()).toBe(3);
      await dragAcross(tab, '2025-08-02 00:00:00');
      await settled(tab);
      expect(await tab.inputValue('#from')).toBe('2025-08-02T00:00');
      expect(await tab.inputValue('#to')).toBe('2025-08-03T00:00');
      expect(new URL(tab.url()).searchParams.get('from')).toBe('2025-08-02T00:00');
      expect(await shownCount(tab)).toBe(1);
      expect(await tab.getAttribute('body', 'data-layer')).toBe('detections');
      await tab.locator('.leaflet-overlay-pane path.leaflet-interactive').first().click();
      await tab.waitForSelector('.leaflet-popup-content table.props');
      expect(await tab.textContent('.leaflet-popup-content')).toContain('h4');
    });
  });

  it('the grid\'s cells follow the zoom: finer cells, asked for the view only, after zooming in', { timeout: 90_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab, requests } = await open();
      await show(tab, { dataset: 'hotspots', from: '2025-08-01T00:00', to: '2025-08-08T00:00' });
      expect(await tab.getAttribute('body', 'data-layer')).toBe('grid');
      expect(await tab.textContent('#map-note')).toMatch(/^1 cell of 5° coloured by count/);
      // One zoom step at a time (a click during Leaflet's zoom animation is not a step): 2°, then 1°.
      for (const cell of ['2', '1']) {
        await tab.click('.leaflet-control-zoom-in');
        await tab.waitForFunction((c) => new RegExp(`cells? of ${c}° `).test(document.getElementById('map-note')!.textContent ?? ''), cell);
      }
      const grid = requests.filter((u) => u.includes('groupBy=grid'));
      expect(new URL(grid.at(-1)!).searchParams.get('cell')).toBe('1');
      expect(new URL(grid.at(-1)!).searchParams.get('bbox')).toMatch(/^-?[\d.]+,-?[\d.]+,-?[\d.]+,-?[\d.]+$/);
    });
  });

  it('is usable from the keyboard: a box typed and Enter, a preset pressed', { timeout: 90_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab } = await open();
      await show(tab, { dataset: 'hotspots', from: '2025-08-05T00:00', to: '2025-08-06T00:00' });
      await tab.focus('#bbox');
      await tab.keyboard.type('-8.03,39.0,-8.0,39.1');
      await tab.keyboard.press('Enter');
      await settled(tab);
      expect(new URL(tab.url()).searchParams.get('bbox')).toBe('-8.03,39.0,-8.0,39.1');
      const boxed = await shownCount(tab);
      expect(boxed).toBeGreaterThan(0);
      expect(boxed).toBeLessThan(300);
      await tab.focus('[data-days="7"]');
      await tab.keyboard.press('Enter');
      await settled(tab);
      const q = new URL(tab.url()).searchParams;
      expect(Date.parse(`${q.get('to')}Z`) - Date.parse(`${q.get('from')}Z`)).toBe(7 * 86_400_000);
      expect(q.get('bbox')).toBe('-8.03,39.0,-8.0,39.1');
    });
  });

  it('sensor readings: the stations on the map and a series per station; a station clicked is filtered on', { timeout: 90_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab } = await open();
      await show(tab, { dataset: 'sensor-readings', from: '2025-08-01T00:00', to: '2025-08-02T00:00', quantity: 'airTemperatureC' });
      expect(await tab.getAttribute('body', 'data-layer')).toBe('stations');
      expect(await tab.getAttribute('body', 'data-drawn')).toBe('2');
      expect(await tab.locator('#series-legend li').allTextContents()).toEqual(['ST0001', 'ST0002']);
      expect(await tab.textContent('#series-caption')).toContain('airTemperatureC per hour and stationId.');
      await tab.locator('.leaflet-overlay-pane path.leaflet-interactive').first().click();
      await settled(tab);
      const station = new URL(tab.url()).searchParams.get('stationId');
      expect(['ST0001', 'ST0002']).toContain(station);
      expect(await tab.locator('#series-legend li').allTextContents()).toEqual([station]);
    });
  });

  it('fire danger: a series per area code for the model and level chosen, no map', { timeout: 90_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab } = await open();
      await show(tab, { dataset: 'fire-danger', from: '2025-08-01T00:00', to: '2025-08-03T00:00', model: 'cffdrs-era5', level: 'adminArea', quantity: 'FWI' });
      expect(await shownCount(tab)).toBe(1);
      expect(await tab.locator('#series-legend li').allTextContents()).toEqual(['PT11']);
      expect(await tab.isHidden('#map')).toBe(true);
      expect(await tab.inputValue('#filter-model')).toBe('cffdrs-era5');
    });
  });

  it('past ROW_LIMIT, the extract command given walks the whole view, and the OGC items URL serves its rows', { timeout: 120_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab } = await open();
      await show(tab, { dataset: 'hotspots', from: '2025-08-05T00:00', to: '2025-08-06T00:00', country: 'PT' });
      expect(await shownCount(tab)).toBe(300);
      const command = (await tab.textContent('#extract-command'))!.split(' ').map((w) => w.replace(/^'(.*)'$/, '$1'));
      expect(command.slice(0, 2)).toEqual(['fire-api', 'extract']);
      const out = path.join(await tempDir(), 'walked.csv');
      const args = command.slice(1).map((w, i, all) => (all[i - 1] === '--out' ? out : w));
      const run = await fireApi(args, { FIRE_API_KEY: server.key });
      expect(run.code, run.stderr).toBe(0);
      expect(parseCsv(await readFile(out, 'utf8')).length - 1).toBe(300);
      const items = await server.get(new URL((await tab.textContent('#ogc-url'))!).pathname + new URL((await tab.textContent('#ogc-url'))!).search);
      const page = (await items.json()) as { features: { properties: { acquiredAtUtc: string; country: string } }[] };
      expect(items.status).toBe(200);
      expect(page.features.length).toBeGreaterThan(0);
      for (const f of page.features) expect(f.properties.acquiredAtUtc.slice(0, 10) + f.properties.country).toBe('2025-08-05PT');
    });
  });

  it('a dataset that cannot be served, and too many requests, are said in words with the wait', { timeout: 90_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    const dataDir = await writeSampleData();
    await writeChain(dataDir, 'hotspots', { ...CHAIN, available: false, message: 'feed paused for maintenance' });
    const other = await startServer(dataDir, { RATE_LIMIT_PER_MINUTE: '2' });
    try {
      await withBrowser(executablePath, async (open) => {
        const { tab } = await open();
        await openView(tab, exploreUrl(other.url, { dataset: 'hotspots', from: '2025-08-01T00:00', to: '2025-08-02T00:00' }), other.key);
        expect(await drawn(tab)).toBe('error');
        expect(await tab.textContent('#status')).toMatch(/^The data cannot be served just now \(503\)\. The hotspots data .+ Try again in \d+ s\.$/);
        // Two requests a minute, both spent on the view above (its count and its chart): the next view is refused.
        await tab.click('[data-days="7"]');
        expect(await drawn(tab)).toBe('error');
        expect(await tab.textContent('#status')).toMatch(/^Too many requests with this key \(429\)\..* Try again in \d+ s\.$/);
      });
    } finally {
      await other.close();
    }
  });
});
