import { afterAll, beforeAll, expect, it } from 'vitest';
import { EXPLORE_SCRIPTS, OGC_PAGE_CSP } from '../../../server/ogc/html.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

// The explorer's shell over plain HTTP: no key, no data, our own files only.
let server: TestServer;
beforeAll(async () => {
  server = await startServer(await writeSampleData(), { ROW_LIMIT: '1234' });
});
afterAll(() => server.close());

const attribute = (html: string, name: string) => {
  const m = new RegExp(`${name}="([^"]*)"`).exec(html);
  return m ? m[1]!.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c))) : null;
};

// The server does not read the view in the URL: hostile values in it are the page's to hold as text (explore-url.test.ts).
it('is served without a key, whatever the view in its URL, under the pages\' CSP, and holds no rows', async () => {
  for (const query of ['', '?dataset=hotspots&from=2025-08-01&to=2025-08-02&bbox=-10,35,5,44&country=PT']) {
    const r = await fetch(`${server.url}/api/v1/explore${query}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(r.headers.get('content-security-policy')).toBe(OGC_PAGE_CSP);
    const html = await r.text();
    expect(html).toContain('id="row-count"');
    expect(html).toContain('id="download-csv"');
    // No row of the sample data is in the page: it fetches them with the key.
    for (const id of ['h1', 'ST0001', 'Marathon']) expect(html).not.toContain(id);
    for (const script of EXPLORE_SCRIPTS) expect(html).toContain(`<script src="/api/v1/ogc/assets/${script}"></script>`);
  }
});

it('carries ROW_LIMIT and each dataset\'s filters (fire-danger\'s models as the data has them); its files are served without a key', async () => {
  const html = await (await fetch(`${server.url}/api/v1/explore`)).text();
  expect(attribute(html, 'data-row-limit')).toBe('1234');
  const datasets = JSON.parse(attribute(html, 'data-datasets')!) as { name: string; filters: { name: string; enum: string[] | null }[] }[];
  expect(datasets.map((d) => d.name)).toEqual(['hotspots', 'burnt-areas', 'fire-danger', 'sensor-readings']);
  const filters = Object.fromEntries(datasets.map((d) => [d.name, d.filters.map((f) => f.name)]));
  expect(filters.hotspots).toEqual(['country', 'bbox']);
  expect(datasets.find((d) => d.name === 'fire-danger')!.filters.find((f) => f.name === 'model')!.enum).toEqual(['cffdrs-era5', 'effis-ecmwf']);
  for (const file of [...EXPLORE_SCRIPTS, 'explore.css', 'leaflet.js', 'world.json']) {
    const r = await fetch(`${server.url}/api/v1/ogc/assets/${file}`);
    expect(r.status, file).toBe(200);
    await r.arrayBuffer();
  }
});

it('is linked from the OGC pages and listed in the OpenAPI document, without a key', async () => {
  expect(await (await fetch(`${server.url}/api/v1/ogc?f=html`)).text()).toContain('<a href="/api/v1/explore">');
  const doc = (await (await fetch(`${server.url}/api/v1/docs`)).json()) as { paths: Record<string, { get: { security: unknown[] } }> };
  expect(doc.paths['/api/v1/explore']!.get.security).toEqual([]);
});
