import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSampleData } from '../helpers/sample-data.ts';
import { waitFor } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
const json = async (path: string) => {
  const r = await server.get(`${path}`);
  return { status: r.status, headers: r.headers, body: (await r.json()) as any };
};
const ids = async (query: string) => (await json(`/api/v1/hotspots?${query}`)).body.features.map((f: any) => f.id);

beforeAll(async () => {
  server = await startServer(await writeSampleData());
});
afterAll(() => server.close());

describe('half-open window', () => {
  it('includes a row exactly at from and excludes a row exactly at to', async () => {
    expect(await ids('from=2025-08-01T10:00:00Z&to=2025-08-02T00:00:00Z')).toEqual(['h2', 'h3']);
    expect(await ids('from=2025-08-01T00:00:00Z&to=2025-08-01T10:00:00Z')).toEqual(['h1']);
  });

  it('keeps microsecond precision at the upper edge', async () => {
    expect(await ids('from=2025-08-01T23:59:59.999999Z&to=2025-08-02')).toEqual(['h3']);
    expect(await ids('from=2025-08-01T12:00&to=2025-08-01T23:59:59.999999Z')).toEqual([]);
  });

  it('converts offsets to UTC and treats a missing offset as UTC', async () => {
    const { body } = await json('/api/v1/hotspots?from=2025-08-01T12:00:00%2B02:00&to=2025-08-01T11:00');
    expect(body.meta.window).toEqual({ from: '2025-08-01T10:00:00Z', to: '2025-08-01T11:00:00Z' });
    expect(body.features.map((f: any) => f.id)).toEqual(['h2']);
  });

  it('an echoed default window is one the API accepts: from is clamped to year 1, never 0000-12-31', async () => {
    const { status, body } = await json('/api/v1/hotspots?to=0001-01-01T12:00:00Z');
    expect(status).toBe(200);
    expect(body.meta.window).toEqual({ from: '0001-01-01T00:00:00Z', to: '0001-01-01T12:00:00Z' });
    expect((await json(`/api/v1/hotspots?from=${body.meta.window.from}&to=${body.meta.window.to}`)).status).toBe(200);
    const empty = await json('/api/v1/hotspots?to=0001-01-01');
    expect(empty.status).toBe(400);
    expect(empty.body.errors).toEqual([{ parameter: 'to', message: 'must be after 0001-01-01T00:00:00Z when from is not given' }]);
  });

  it('echoes the default window: to = now in whole seconds, from = to minus one day', async () => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const { body } = await json('/api/v1/hotspots');
    const to = Date.parse(body.meta.window.to);
    expect(body.meta.window.to).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(to).toBeGreaterThanOrEqual(before);
    expect(to - Date.parse(body.meta.window.from)).toBe(86_400_000);
  });

  it('defaults burnt-areas to a 30-day window', async () => {
    const { body } = await json('/api/v1/burnt-areas?to=2025-09-01');
    expect(body.meta.window).toEqual({ from: '2025-08-02T00:00:00Z', to: '2025-09-01T00:00:00Z' });
  });
});

describe('bad parameters are 400 problems naming the parameter, before any query', () => {
  const cases: [string, string][] = [
    ['from=yesterday', 'from'],
    ['from=2025-02-30', 'from'],
    ['to=2025-08-01T25:00', 'to'],
    ['from=2025-08-02&to=2025-08-01', 'from'],
    ['from=2025-08-01&to=2025-08-01', 'from'],
    ['contry=PT', 'contry'],
    ['country=PT&country=ES', 'country'],
    ['country=PRT', 'country'],
    ['limit=10', 'limit'],
  ];
  for (const [query, parameter] of cases) {
    it(`${query} -> 400 naming ${parameter}`, async () => {
      const r = await json(`/api/v1/hotspots?${query}`);
      expect(r.status).toBe(400);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(r.body).toMatchObject({ type: '/api/v1/docs#problem-invalid-parameter', status: 400, instance: '/api/v1/hotspots' });
      expect(r.body.requestId).toEqual(expect.any(String));
      expect(r.body.errors.map((e: any) => e.parameter)).toContain(parameter);
    });
  }

  it('an unknown path is a 404 problem', async () => {
    const r = await json('/api/v1/hotspot');
    expect(r.status).toBe(404);
    expect(r.body.type).toBe('/api/v1/docs#problem-not-found');
  });

  it('any format other than csv gives GeoJSON, as the specification says', async () => {
    const r = await server.get(`/api/v1/hotspots?from=2025-08-01&to=2025-08-02&format=xml`);
    expect(r.headers.get('content-type')).toBe('application/geo+json');
    await r.body?.cancel();
  });
});

describe('requests the router cannot take', () => {
  it('a malformed URL is a 400 problem, not a framework body', async () => {
    const r = await server.get('/api/v1/hotspots?from=%zz');
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const bad = await server.get('/api/v1/%zz');
    expect(bad.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    await bad.arrayBuffer();
  });

  it('HEAD answers the GET headers without a body and returns its connection', async () => {
    const r = await server.get('/api/v1/hotspots?from=2025-08-01&to=2025-08-03&format=csv', { method: 'HEAD' });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-returned')).toBe('4');
    expect(await r.text()).toBe('');
    // Earlier tests' cancelled streams return their connections asynchronously: wait, bounded.
    expect(await waitFor(() => server.engine.busy === 0, 2000)).toBe(true);
  });
});
