import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { cursorScope, encodeCursor } from '../../../server/ogc/cursor.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startServer(await writeSampleData());
});
afterAll(() => server.close());

const json = async (path: string, init?: RequestInit) => {
  const r = await server.get(path, init);
  return { status: r.status, type: r.headers.get('content-type'), body: (await r.json()) as Record<string, any> };
};

describe('OGC API – Features documents', () => {
  it('the landing page, with and without a trailing slash, links the API definition, conformance and collections', async () => {
    for (const path of ['/api/v1/ogc', '/api/v1/ogc/']) {
      const { status, body } = await json(path);
      expect(status).toBe(200);
      const rels = Object.fromEntries((body.links as { rel: string; href: string }[]).map((l) => [l.rel, l.href]));
      expect(rels['service-desc']).toBe(`${server.url}/api/v1/docs`);
      expect(rels.conformance).toBe(`${server.url}/api/v1/ogc/conformance`);
      expect(rels.data).toBe(`${server.url}/api/v1/ogc/collections`);
      expect(rels.related).toBe(`${server.url}/api/v1/explore`);
      expect((await fetch(rels.related!)).status).toBe(200);
      // The API definition the landing page names resolves (QGIS reads it next) and describes the items.
      const doc = await (await fetch(rels['service-desc']!)).json();
      expect(Object.keys(doc.paths)).toContain('/api/v1/ogc/collections/{collectionId}/items');
    }
  });

  it('conformance names core, GeoJSON and OpenAPI 3.0', async () => {
    const { body } = await json('/api/v1/ogc/conformance');
    expect(body.conformsTo).toEqual(expect.arrayContaining(['http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core', 'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson']));
  });

  it('one collection per dataset; the temporal extent is the partition folders\' span, the spatial one the rows\' box; an unknown collection is a 404 problem', async () => {
    const { body } = await json('/api/v1/ogc/collections');
    expect(body.collections.map((c: { id: string }) => c.id)).toEqual(['hotspots', 'burnt-areas', 'fire-danger', 'sensor-stations', 'sensor-readings']);
    const hot = (await json('/api/v1/ogc/collections/hotspots')).body;
    expect(hot.extent.temporal.interval).toEqual([['2025-08-01T00:00:00Z', '2025-08-02T23:59:59.999999Z']]);
    expect(hot.links.find((l: { rel: string }) => l.rel === 'items').href).toBe(`${server.url}/api/v1/ogc/collections/hotspots/items`);
    expect((await json('/api/v1/ogc/collections/sensor-stations')).body.extent.temporal).toBeUndefined();
    // The spatial extent is the rows' box; readings are at their stations; fire danger has no geometry.
    const boxes = Object.fromEntries(body.collections.map((c: { id: string; extent: { spatial?: { bbox: number[][] } } }) => [c.id, c.extent.spatial?.bbox]));
    expect(boxes).toEqual({
      hotspots: [[-8.25, 39.5, -8.25, 39.5]],
      'burnt-areas': [[23.9, 38.1, 23.9 + 0.1, 38.1 + 0.1]],
      'fire-danger': undefined,
      'sensor-stations': [[-9.1, 38.5, -7.9, 40.1]],
      'sensor-readings': [[-9.1, 38.5, -7.9, 40.1]],
    });
    expect(hot.extent.spatial).toEqual({ bbox: boxes.hotspots, crs: 'http://www.opengis.net/def/crs/OGC/1.3/CRS84' });
    const missing = await json('/api/v1/ogc/collections/nope');
    expect(missing.status).toBe(404);
    expect(missing.type).toMatch(/^application\/problem\+json/);
  });

  it('queryables list the time, the geometry and the filters as JSON Schema', async () => {
    const r = await json('/api/v1/ogc/collections/hotspots/queryables');
    expect(r.type).toMatch(/^application\/schema\+json/);
    expect(Object.keys(r.body.properties).sort()).toEqual(['acquiredAtUtc', 'country', 'geometry']);
  });

  it('needs the key like the data endpoints, as a bearer header or as the Basic password', async () => {
    expect((await fetch(`${server.url}/api/v1/ogc/collections`)).status).toBe(401);
    const basic = { authorization: `Basic ${Buffer.from(`qgis:${server.key}`).toString('base64')}` };
    expect((await fetch(`${server.url}/api/v1/ogc/collections/hotspots/items?limit=1`, { headers: basic })).status).toBe(200);
  });
});

describe('OGC API – Features items: bad input is a 400 problem naming the parameter', () => {
  const problem = async (query: string, collection = 'hotspots') => {
    const r = await json(`/api/v1/ogc/collections/${collection}/items?${query}`);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    return r.body as { detail: string; errors: { parameter: string; message: string }[] };
  };

  it.each([
    ['limit=0', 'limit'],
    ['limit=2.5', 'limit'],
    ['datetime=yesterday', 'datetime'],
    ['datetime=2025-08-02T00:00:00Z/2025-08-01T00:00:00Z', 'datetime'],
    ['datetime=a/b/c', 'datetime'],
    ['datetime=..', 'datetime'],
    ['datetime=', 'datetime'],
    ['datetime=2025-08-01T00:00:00Z/9999-12-31T23:59:59.999999Z', 'datetime'],
    ['f=xml', 'f'],
    ['bbox=1,2,3', 'bbox'],
    ['country=Portugal', 'country'],
    ['from=2025-08-01', 'from'],
  ])('%s', async (query, parameter) => {
    expect((await problem(query)).errors.map((e) => e.parameter)).toContain(parameter);
  });

  it('a collection without time takes no datetime', async () => {
    expect((await problem('datetime=2025-08-01T00:00:00Z', 'sensor-stations')).errors[0]!.parameter).toBe('datetime');
  });

  it('a forged cursor, or one from another query, says to start the walk again', async () => {
    const page = (await json('/api/v1/ogc/collections/hotspots/items?limit=1')).body;
    const next = new URL(page.links.find((l: { rel: string }) => l.rel === 'next').href);
    const cursor = next.searchParams.get('cursor')!;
    for (const query of [`limit=1&cursor=${cursor}&country=PT`, 'cursor=bm90IGEgY3Vyc29y', `cursor=${cursor.slice(0, -3)}`]) {
      const body = await problem(query);
      expect(body.errors[0]).toMatchObject({ parameter: 'cursor' });
      expect(body.detail).toMatch(/start the walk again/);
    }
    // Made with the right scope but values no row can have: still a restart, never a 5xx.
    const scope = cursorScope('hotspots', { limit: '1' });
    for (const forged of [{ from: '2025-08-01T00:00:00Z', after: ['x', 'y'] }, { from: '2025-08-01T00:00:00Z', after: ['2025-08-02T00:00:00Z', 'h1'] }, { from: '9999-12-31T00:00:00Z', after: null }, { from: 'yesterday', after: null }]) {
      expect((await problem(`limit=1&cursor=${encodeCursor(forged, scope)}`)).detail).toMatch(/start the walk again/);
    }
    // The same cursor with another limit continues the same walk.
    expect((await server.get(`/api/v1/ogc/collections/hotspots/items?limit=5&cursor=${cursor}`)).status).toBe(200);
  });
});

describe('OGC API – Features: one feature by its id', () => {
  it('the Feature of the items page, with its links in the Link header; 404 for an id that is not there or a collection without ids', async () => {
    const items = (await json('/api/v1/ogc/collections/hotspots/items?limit=3')).body;
    const first = items.features[0] as { id: string };
    const r = await server.get(`/api/v1/ogc/collections/hotspots/items/${encodeURIComponent(first.id)}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/geo+json');
    expect(r.headers.get('link')).toMatch(/rel="collection"/);
    const { links, ...feature } = (await r.json()) as { links: { rel: string }[] };
    expect(feature).toEqual(first);
    expect(links.map((l) => l.rel)).toEqual(['self', 'alternate', 'collection']);
    const station = (await json('/api/v1/ogc/collections/sensor-stations/items?limit=1')).body.features[0] as { id: string };
    expect((await json(`/api/v1/ogc/collections/sensor-stations/items/${station.id}`)).body).toEqual({ ...station, links: expect.any(Array) });
    // A missing feature carries no tag a later If-None-Match could turn into a 304.
    expect((await server.get('/api/v1/ogc/collections/hotspots/items/nope')).headers.get('etag')).toBeNull();
    for (const path of ['/api/v1/ogc/collections/hotspots/items/nope', "/api/v1/ogc/collections/hotspots/items/x'%20OR%201=1--", '/api/v1/ogc/collections/fire-danger/items/1']) {
      const missing = await server.get(path);
      expect(missing.status, path).toBe(404);
      expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect((await server.get(`/api/v1/ogc/collections/hotspots/items/${'x'.repeat(201)}`)).status).toBe(400);
  });
});
