import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { checkCollection, checkException, checkFeature, checkItems, checkLanding, rels, type Json } from './standard-checks.ts';

// OGC API – Features – Part 1: Core 1.0.1, requirement by requirement (the checks are in
// standard-checks.ts), on every kind of OGC response the service makes and on every collection.
// ROW_LIMIT=2 makes the most features a page holds 2, so a larger limit has something to clamp.
let server: TestServer;
let collections: Json[];
let maxLimit: number;
beforeAll(async () => {
  server = await startServer(await writeSampleData(), { ROW_LIMIT: '2' });
  collections = (await json('/api/v1/ogc/collections')).body.collections as Json[];
  const doc = (await (await fetch(`${server.url}/api/v1/docs`)).json()) as Json;
  const params = doc.paths['/api/v1/ogc/collections/{collectionId}/items'].get.parameters as Json[];
  maxLimit = params.find((p) => p.name === 'limit')!.schema.maximum as number;
});
afterAll(() => server.close());

async function json(path: string, init?: RequestInit) {
  const r = await server.get(path, init);
  return { status: r.status, type: r.headers.get('content-type') ?? '', link: r.headers.get('link') ?? '', body: (await r.json()) as Json };
}

/** Every page of a walk from `first`, each checked as an items response; the features of all of them. */
async function walk(first: string, limit: number): Promise<Json[]> {
  const features: Json[] = [];
  for (let url: string | undefined = first, pages = 0; url; pages++) {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const page = await json(url.replace(server.url, ''));
    expect(checkItems(page, { limit, before, after: Date.now() }), url).toEqual([]);
    features.push(...(page.body.features as Json[]));
    url = (page.body.links as Json[]).find((l) => l.rel === 'next')?.href as string | undefined;
    expect(pages).toBeLessThan(50);
  }
  return features;
}

const ids = (features: Json[]) => features.map((f) => f.id ?? JSON.stringify(f.properties));
const ITEMS = (id: string, query = '') => `/api/v1/ogc/collections/${id}/items${query}`;

describe('OGC API – Features Part 1 core, GeoJSON, HTML and OAS 3.0 classes', () => {
  it('/req/core/root-success, /req/core/conformance-success: the landing page links the definition, conformance and data; every class is declared', async () => {
    const landing = await json('/api/v1/ogc');
    expect(checkLanding(landing.body)).toEqual([]);
    const conformance = (await json('/api/v1/ogc/conformance')).body.conformsTo as string[];
    for (const c of ['core', 'geojson', 'html', 'oas30']) expect(conformance).toContain(`http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/${c}`);
    // /req/oas30/oas-definition-1: the service-desc link is an OpenAPI 3.0 document with the core paths.
    const desc = (landing.body.links as Json[]).find((l) => l.rel === 'service-desc')!;
    const doc = (await (await fetch(desc.href as string)).json()) as Json;
    expect(doc.openapi).toMatch(/^3\.0\./);
    for (const p of ['', '/conformance', '/collections', '/collections/{collectionId}', '/collections/{collectionId}/items', '/collections/{collectionId}/items/{featureId}']) expect(Object.keys(doc.paths)).toContain(`/api/v1/ogc${p}`);
    // /req/core/fc-limit-definition, fc-bbox-definition, fc-time-definition: the items parameters as the standard defines them.
    const params = Object.fromEntries((doc.paths['/api/v1/ogc/collections/{collectionId}/items'].get.parameters as Json[]).map((p) => [p.name, p]));
    expect(params.limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 2 });
    expect(params.bbox).toMatchObject({ in: 'query', style: 'form', explode: false, schema: { type: 'array', minItems: 4, maxItems: 6, items: { type: 'number' } } });
    expect(params.datetime).toMatchObject({ in: 'query', schema: { type: 'string' } });
  });

  it('/req/core/fc-md-success, /req/core/sfc-md-success: /collections and each collection, the same object in both', async () => {
    const list = await json('/api/v1/ogc/collections');
    // /req/core/fc-md-links: itself, and itself in every other media type served (the page).
    expect(rels(list.body.links)).toEqual(['self', 'alternate']);
    expect(collections.map((c) => c.id)).toEqual(['hotspots', 'burnt-areas', 'fire-danger', 'sensor-stations', 'sensor-readings']);
    for (const c of collections) {
      expect(checkCollection(c, server.url), c.id).toEqual([]);
      expect((await json(`/api/v1/ogc/collections/${c.id}`)).body).toEqual(c);
      // Part 3 (filtering) /req/queryables/get-queryables-response: a JSON Schema of an object, its $id the resource.
      const href = (c.links as Json[]).find((l) => l.rel === 'http://www.opengis.net/def/rel/ogc/1.0/queryables')!.href as string;
      const q = await json(href.replace(server.url, ''));
      expect([q.type.split(';')[0], q.body.type, q.body.$id, q.body.$schema], c.id).toEqual(['application/schema+json', 'object', href, 'https://json-schema.org/draft/2020-12/schema']);
      expect(Object.keys(q.body.properties).length).toBeGreaterThan(0);
    }
  });

  it('/req/core/fc-response, fc-links, fc-timeStamp, fc-numberReturned, /req/geojson/content: every page of every collection, walked to its end', async () => {
    for (const c of collections) {
      const features = await walk(`${server.url}${ITEMS(c.id)}`, maxLimit);
      expect(features.length, c.id).toBeGreaterThan(0);
      expect(new Set(ids(features)).size).toBe(features.length);
      const one = await json(ITEMS(c.id, '?limit=1&f=json'));
      expect(checkItems(one, { limit: 1, before: 0, after: Date.now() })).toEqual([]);
    }
  });

  it('/req/core/fc-limit-response-1: a limit above the maximum is served as the maximum, not refused', async () => {
    expect(maxLimit).toBe(2);
    for (const limit of ['3', '10001', '1000000', '99999999999999999999']) {
      const page = await json(ITEMS('hotspots', `?limit=${limit}`));
      expect(page.status, limit).toBe(200);
      expect(page.body.numberReturned).toBe(2);
      expect(rels(page.body.links)).toContain('next');
    }
    // A walk with a large limit is the walk with the maximum.
    expect(ids(await walk(`${server.url}${ITEMS('hotspots', '?limit=10001')}`, maxLimit))).toEqual(ids(await walk(`${server.url}${ITEMS('hotspots', '?limit=2')}`, maxLimit)));
    for (const bad of ['0', '-1', '2.5', 'many']) expect((await json(ITEMS('hotspots', `?limit=${bad}`))).status, bad).toBe(400);
  });

  it('/req/core/fc-bbox-response: a box keeps what meets it; six numbers (heights) select what their horizontal box selects', async () => {
    const boxed = collections.filter((c) => c.extent.spatial && c.links.some((l: Json) => l.rel.endsWith('queryables')));
    for (const c of boxed) {
      const queryables = (await json(`/api/v1/ogc/collections/${c.id}/queryables`)).body;
      if (!queryables.properties.geometry) continue;
      const [w, s, e, n] = c.extent.spatial.bbox[0] as number[];
      const all = ids(await walk(`${server.url}${ITEMS(c.id)}`, maxLimit));
      const flat = await walk(`${server.url}${ITEMS(c.id, `?bbox=${w},${s},${e},${n}`)}`, maxLimit);
      expect(ids(flat), c.id).toEqual(all);
      for (const heights of ['-100,100', '0,0', '-1e6,1e6']) {
        const [lo, hi] = heights.split(',');
        expect(ids(await walk(`${server.url}${ITEMS(c.id, `?bbox=${w},${s},${lo},${e},${n},${hi}`)}`, maxLimit)), `${c.id} ${heights}`).toEqual(all);
      }
      expect(await walk(`${server.url}${ITEMS(c.id, '?bbox=100,-10,0,101,-9,10')}`, maxLimit)).toEqual([]);
      const wrong = await json(ITEMS(c.id, `?bbox=${w},${s},10,${e},${n},5`));
      expect([wrong.status, wrong.body.errors[0].parameter, checkException(wrong)]).toEqual([400, 'bbox', []]);
    }
    // The v1 endpoint keeps its four numbers.
    const v1 = await json('/api/v1/hotspots?from=2025-08-01&to=2025-08-03&bbox=-9,39,0,-8,40,10');
    expect([v1.status, v1.body.errors[0].parameter]).toEqual([400, 'bbox']);
  });

  it('/req/core/fc-time-response: datetime keeps the features whose time lies in it', async () => {
    for (const c of collections.filter((x) => x.extent.temporal)) {
      const queryables = (await json(`/api/v1/ogc/collections/${c.id}/queryables`)).body.properties as Json;
      const column = Object.keys(queryables).find((k) => queryables[k].format === 'date-time')!;
      const all = await walk(`${server.url}${ITEMS(c.id)}`, maxLimit);
      const first = all[0]!.properties[column] as string;
      const time = (f: Json) => Date.parse(f.properties[column] as string);
      const at = await walk(`${server.url}${ITEMS(c.id, `?datetime=${first}`)}`, maxLimit);
      expect(ids(at), c.id).toEqual(ids(all.filter((f) => time(f) === Date.parse(first))));
      const until = await walk(`${server.url}${ITEMS(c.id, `?datetime=../${first}`)}`, maxLimit);
      expect(ids(until)).toEqual(ids(at));
      const after = await walk(`${server.url}${ITEMS(c.id, `?datetime=${first}/..`)}`, maxLimit);
      expect(ids(after)).toEqual(ids(all));
    }
  });

  it('/req/core/f-success, /req/core/f-links: every feature of every collection with ids, by its id', async () => {
    for (const c of collections) {
      const features = await walk(`${server.url}${ITEMS(c.id)}`, maxLimit);
      if (features[0]!.id === undefined) continue;
      for (const f of features) {
        const one = await json(`${ITEMS(c.id)}/${encodeURIComponent(f.id as string)}`);
        expect(checkFeature(one, `${server.url}/api/v1/ogc/collections/${c.id}`, f.id as string), `${c.id} ${f.id}`).toEqual([]);
        const { links: _links, ...bare } = one.body;
        expect(bare).toEqual(f);
      }
    }
  });

  it('/req/html/content: every document, page and feature as HTML with f=html', async () => {
    for (const path of ['/api/v1/ogc', '/api/v1/ogc/conformance', '/api/v1/ogc/collections', ...collections.flatMap((c) => [`/api/v1/ogc/collections/${c.id}`, ITEMS(c.id)]), `${ITEMS('hotspots')}/h1`]) {
      const r = await fetch(`${server.url}${path}?f=html`);
      expect([r.status, r.headers.get('content-type')], path).toEqual([200, 'text/html; charset=utf-8']);
      await r.body?.cancel();
    }
  });

  it('/req/core/query-param-invalid, query-param-unknown, http status codes: exceptions carry code and say what happened', async () => {
    const cases: [string, number, string][] = [
      [ITEMS('hotspots', '?limit=0'), 400, 'invalid-parameter'],
      [ITEMS('hotspots', '?colour=red'), 400, 'invalid-parameter'],
      [ITEMS('sensor-stations', '?datetime=2025-08-01T00:00:00Z'), 400, 'invalid-parameter'],
      ['/api/v1/ogc/collections/nope', 404, 'not-found'],
      [ITEMS('nope'), 404, 'not-found'],
      [`${ITEMS('hotspots')}/nope`, 404, 'not-found'],
      [`${ITEMS('burnt-areas')}/not-a-number`, 404, 'not-found'],
      [`${ITEMS('fire-danger')}/1`, 404, 'not-found'],
    ];
    for (const [path, status, code] of cases) {
      const r = await json(path);
      expect([r.status, r.body.code, checkException(r)], path).toEqual([status, code, []]);
    }
    const unkeyed = await fetch(`${server.url}${ITEMS('hotspots')}`);
    expect([unkeyed.status, ((await unkeyed.json()) as Json).code]).toEqual([401, 'unauthorized']);
  });
});
