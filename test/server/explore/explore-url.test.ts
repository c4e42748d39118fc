import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { chromium, needService } from '../../helpers/services.ts';
import { dragAcross, drawn, exploreUrl, openView, settled, shownCount, withBrowser } from '../../helpers/explore-browser.ts';

// The view in the page's URL, as a person shares it: what the page cannot hold is named, not
// dropped in silence.
const CHROMIUM = chromium();

let server: TestServer;
beforeAll(async () => {
  server = await startServer(await writeSampleData());
}, 60_000);
afterAll(() => server.close());

describe('the explorer\'s URL in Chromium', () => {
  it('a dataset, a choice or a time it does not know is named as replaced; a view chosen afterwards clears the note', { timeout: 90_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab } = await open();
      await openView(tab, exploreUrl(server.url, { dataset: 'fire-danger', from: 'yesterday', to: '2025-08-03T00:00', model: 'nope', level: 'country' }), server.key);
      await settled(tab);
      expect(await tab.textContent('#url-note')).toBe('Not understood in this URL, so replaced: from "yesterday", model "nope".');
      expect(await tab.inputValue('#from')).toBe('2025-07-04T00:00');
      expect(await tab.inputValue('#filter-model')).toBe('');
      await tab.click('#apply');
      await settled(tab);
      expect(await tab.textContent('#url-note')).toBe('');

      await openView(tab, exploreUrl(server.url, { dataset: 'wildfires', from: '2025-08-01T00:00', to: '2025-08-03T00:00' }), server.key);
      await settled(tab);
      expect(await tab.textContent('#url-note')).toBe('Not understood in this URL, so replaced: dataset "wildfires".');
      expect(await tab.inputValue('#dataset')).toBe('hotspots');
      // A view the page holds whole is not remarked on.
      await openView(tab, exploreUrl(server.url, { dataset: 'fire-danger', from: '2025-08-01T00:00', to: '2025-08-03T00:00', model: 'effis-ecmwf', level: 'country' }), server.key);
      await settled(tab);
      expect(await tab.textContent('#url-note')).toBe('');
    });
  });

  it('hostile values in the URL are text: no element made of them, no script run', { timeout: 90_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab } = await open();
      const dialogs: string[] = [];
      tab.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      const hostile = {
        dataset: '<img src=x onerror=alert(1)>',
        from: '"><svg onload=alert(2)>',
        to: '2025-08-03T00:00',
        country: '<script>alert(3)</script>',
        bbox: '"><iframe src=javascript:alert(4)>',
        colour: '</option><b id=injected>',
      };
      await openView(tab, exploreUrl(server.url, hostile), server.key);
      await drawn(tab);
      expect(await tab.textContent('#url-note')).toBe(`Not understood in this URL, so replaced: dataset "${hostile.dataset}", from "${hostile.from}".`);
      expect(await tab.inputValue('#filter-country')).toBe(hostile.country);
      expect(await tab.inputValue('#bbox')).toBe(hostile.bbox);
      const injected = await tab.evaluate(() => document.querySelectorAll('img[src="x"], svg[onload], iframe, #injected, [onerror], [onload], script:not([src])').length);
      expect(injected).toBe(0);
      expect(dialogs).toEqual([]);
    });
  });

  it('in a browser far from UTC (Pacific/Kiritimati, UTC+14), the inputs, the URL and the counts stay UTC', { timeout: 90_000 }, async (ctx) => {
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(
      executablePath,
      async (open) => {
        const { tab } = await open();
        expect(await tab.evaluate(() => new Date(Date.UTC(2025, 7, 1)).getHours())).toBe(14);
        expect(await tab.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone)).toBe('Pacific/Kiritimati');
        await openView(tab, exploreUrl(server.url, { dataset: 'hotspots', from: '2025-08-01T00:00', to: '2025-08-08T00:00' }), server.key);
        await settled(tab);
        expect(await tab.inputValue('#from')).toBe('2025-08-01T00:00');
        expect(await tab.textContent('#window-echo')).toBe('in [2025-08-01T00:00:00Z, 2025-08-08T00:00:00Z)');
        await dragAcross(tab, '2025-08-02 00:00:00');
        await settled(tab);
        expect([await tab.inputValue('#from'), await tab.inputValue('#to')]).toEqual(['2025-08-02T00:00', '2025-08-03T00:00']);
        expect(new URL(tab.url()).searchParams.get('to')).toBe('2025-08-03T00:00');
        const served = await server.get('/api/v1/hotspots?from=2025-08-02T00:00:00Z&to=2025-08-03T00:00:00Z&format=csv');
        await served.arrayBuffer();
        expect(await shownCount(tab)).toBe(Number(served.headers.get('x-returned')));
        // A preset ends at the UTC minute the browser is in, not its wall clock's 14 hours ahead.
        await tab.click('[data-days="1"]');
        await settled(tab);
        const q = new URL(tab.url()).searchParams;
        const browserNow = await tab.evaluate(() => Date.now());
        expect(browserNow - Date.parse(`${q.get('to')}Z`)).toBeGreaterThanOrEqual(0);
      },
      { timezoneId: 'Pacific/Kiritimati' },
    );
  });
});
