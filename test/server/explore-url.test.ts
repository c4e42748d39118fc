import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSampleData } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { chromium, needService } from '../helpers/services.ts';
import { exploreUrl, openView, settled, withBrowser } from '../helpers/explore-browser.ts';

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
});
