import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fireApi } from '../../helpers/cli.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { parseCsv } from '../../helpers/sample-data.ts';
import type { TestServer } from '../../helpers/server.ts';
import { chromium, needService } from '../../helpers/services.ts';
import { exploreServer, settled, showView, shownCount, withBrowser } from '../../helpers/explore-browser.ts';

// The explorer at its edges in Chromium: a view changed while the last one is still shown, a
// view the extract command cannot ask for, a map panned onto a repeated copy of the world.
const CHROMIUM = chromium();

let server: TestServer;
beforeAll(async () => {
  server = await exploreServer();
}, 60_000);
afterAll(() => server.close());

const show = (tab: Page, params: Record<string, string>) => showView(tab, server, params);

const dataRequests = (requests: string[]) => requests.filter((u) => new URL(u).pathname === '/api/v1/hotspots');

describe('the explorer\'s edges in Chromium', () => {
  it('a download is never of the view before: until the new view\'s count arrives, the downloads wait', { timeout: 90_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab, requests } = await open();
      await show(tab, { dataset: 'hotspots', from: '2025-08-01T00:00', to: '2025-08-06T00:00' });
      // The new view's count is held back until the download has been tried.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      await tab.route((u) => u.pathname === '/api/v1/hotspots/aggregate', async (route) => {
        await held;
        await route.continue();
      });
      await tab.fill('#bbox', '0,0,1,1');
      await tab.click('#apply');
      await tab.waitForFunction(() => document.getElementById('row-count')!.textContent === '…');
      expect(await tab.isDisabled('#download-csv')).toBe(true);
      await tab.click('#download-csv', { force: true });
      release();
      await settled(tab);
      expect(await shownCount(tab)).toBe(0);
      expect(dataRequests(requests)).toEqual([]);
      await tab.unroute((u) => u.pathname === '/api/v1/hotspots/aggregate');
      const [download] = await Promise.all([tab.waitForEvent('download'), tab.click('#download-csv')]);
      await download.path();
      expect(dataRequests(requests).map((u) => new URL(u).searchParams.get('bbox'))).toEqual(['0,0,1,1']);
    });
  });

  it('a key refused on a download is asked for again, and the download then made with the key typed', { timeout: 90_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab } = await open();
      const view = { from: '2025-08-01T00:00', to: '2025-08-03T00:00', country: 'ES' };
      await show(tab, { dataset: 'hotspots', ...view });
      // The key revoked since the view was drawn: the tab holds one the service no longer takes.
      await tab.evaluate(() => sessionStorage.setItem('research-read-api-key', 'frk_not_a_key'));
      const authorizations: string[] = [];
      tab.on('request', (r) => authorizations.push(r.headers().authorization ?? ''));
      await tab.click('#download-csv');
      await tab.waitForFunction(() => !(document.getElementById('key-form') as HTMLFormElement).hidden && /\(401\)/.test(document.getElementById('status')!.textContent ?? ''));
      await tab.fill('#key', server.key);
      const [download] = await Promise.all([tab.waitForEvent('download'), tab.click('#key-form button')]);
      const endpoint = Buffer.from(await (await server.get(`/api/v1/hotspots?${new URLSearchParams({ ...view, format: 'csv' })}`)).arrayBuffer());
      expect((await readFile((await download.path())!)).equals(endpoint)).toBe(true);
      expect(authorizations).toEqual(['Bearer frk_not_a_key', `Bearer ${server.key}`]);
    });
  });

  it('the extract command given reproduces the view\'s count whatever its simulated filter; for simulated=true, none is given and the OGC URL serves the view', { timeout: 120_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab } = await open();
      for (const simulated of ['', 'false', 'true']) {
        await show(tab, { dataset: 'sensor-readings', from: '2025-08-01T00:00', to: '2025-08-02T00:00', ...(simulated ? { simulated } : {}) });
        const count = await shownCount(tab);
        expect(count).toBeGreaterThan(0);
        const text = (await tab.textContent('#extract-command'))!;
        const ogc = new URL((await tab.textContent('#ogc-url'))!);
        const items = (await (await server.get(ogc.pathname + ogc.search)).json()) as { features: { properties: { simulated: boolean } }[] };
        expect(items.features.length, simulated).toBe(count);
        if (simulated === 'true') {
          expect(text).toBe('fire-api extract cannot ask for simulated stations only: use the OGC items URL below.');
          expect(items.features.every((f) => f.properties.simulated)).toBe(true);
          continue;
        }
        expect(await extracted(text), simulated).toBe(count);
      }
    });
  });

  it('the extract command is one the shell reads as given: a box typed with spaces is one word', { timeout: 90_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab } = await open();
      await show(tab, { dataset: 'hotspots', from: '2025-08-05T02:00', to: '2025-08-05T04:30', bbox: '-8.05, 39.0, -8.0, 39.05' });
      const count = await shownCount(tab);
      expect(count).toBeGreaterThan(0);
      expect(await extracted((await tab.textContent('#extract-command'))!)).toBe(count);
    });
  });

  it('on a repeated copy of the world (panned east past 180°), the grid, "Use the current view" and "Draw a box" ask for a box the API takes', { timeout: 90_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab, requests } = await open();
      await show(tab, { dataset: 'hotspots', from: '2025-08-01T00:00', to: '2025-08-06T00:00' });
      expect(await tab.getAttribute('body', 'data-layer')).toBe('grid');
      const map = (await tab.locator('#map').boundingBox())!;
      const y = map.y + map.height / 2;
      // Twice the map's width dragged westwards: its view moves more than 360° east.
      for (let i = 0; i < 2; i++) await drag(tab, [map.x + map.width - 5, y], [map.x + 5, y]);
      for (const cell of ['2', '1']) {
        await tab.click('.leaflet-control-zoom-in');
        await tab.waitForFunction((c) => new RegExp(`cells? of ${c}° `).test(document.getElementById('map-note')!.textContent ?? ''), cell);
      }
      await tab.click('#use-view');
      await settled(tab);
      const used = new URL(tab.url()).searchParams.get('bbox')!;
      expect(inWorld(used), used).toBe(true);
      await tab.click('#draw-box');
      await drag(tab, [map.x + map.width / 2 - 40, y - 40], [map.x + map.width / 2 + 40, y + 40]);
      await settled(tab);
      const drawn = new URL(tab.url()).searchParams.get('bbox')!;
      expect(drawn).not.toBe(used);
      expect(inWorld(drawn), drawn).toBe(true);
      for (const u of requests.filter((r) => r.includes('bbox='))) expect(inWorld(new URL(u).searchParams.get('bbox')!), u).toBe(true);
    });
  });
});

/** Longitudes within ±180 and latitudes within ±90, south below north (west above east crosses the antimeridian). */
function inWorld(bbox: string): boolean {
  const [w, s, e, n] = bbox.split(',').map(Number) as [number, number, number, number];
  return Math.abs(w) <= 180 && Math.abs(e) <= 180 && Math.abs(s) <= 90 && Math.abs(n) <= 90 && s <= n;
}

/** The words the shell reads in a command (printf says each back), run as fire-api with `--out` ours: the rows written. */
async function extracted(command: string): Promise<number> {
  const { stdout } = await promisify(execFile)('sh', ['-c', `printf '%s\\0' ${command}`]);
  const words = stdout.split('\0').slice(0, -1);
  expect(words.slice(0, 2)).toEqual(['fire-api', 'extract']);
  const out = path.join(await tempDir(), 'walked.csv');
  const run = await fireApi(words.slice(1).map((w, i, all) => (all[i - 1] === '--out' ? out : w)), { FIRE_API_KEY: server.key });
  expect(run.code, run.stderr).toBe(0);
  return parseCsv(await readFile(out, 'utf8')).length - 1;
}

/** Press, move in steps, release. */
async function drag(tab: Page, [x0, y0]: [number, number], [x1, y1]: [number, number]): Promise<void> {
  await tab.mouse.move(x0, y0);
  await tab.mouse.down();
  await tab.mouse.move(x1, y1, { steps: 10 });
  await tab.mouse.up();
}
