import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyedOnly } from '../../../server/access/auth.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

// One Accept reader for every page-or-JSON choice (the OGC documents, items and features, and the
// API definition), weighed by q as RFC 9110 says, and the one decision that lets a request for a
// page shell pass without a key.
let server: TestServer;
beforeAll(async () => {
  // Hundreds of requests without a key: the per-address limit on failed authentication is not what is tested here.
  server = await startServer(await writeSampleData(), { AUTH_FAILURES_PER_MINUTE: '100000' });
});
afterAll(() => server.close());

const CHROME = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7';
const FIREFOX = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** Accept headers and whether each one asks for the page rather than JSON. */
const ACCEPTS: [string, boolean][] = [
  [CHROME, true],
  [FIREFOX, true],
  ['text/html', true],
  ['TEXT/HTML; charset=utf-8', true],
  ['text/*', true],
  ['application/json;q=0.5, text/html', true],
  ['text/html;q=0.3', true],
  ['*/*', false],
  ['', false],
  ['application/json', false],
  ['application/geo+json', false],
  ['text/html;q=0', false],
  ['text/html;q=0, */*', false],
  ['text/html;q=0.5, application/json', false],
  ['text/html;q=0.5, */*', false],
  ['application/json, text/html', false],
  ['text/html, application/json', false],
  ['text/html;q=abc', false],
  ['application/*;q=0.9, text/html;q=0.8', false],
  ['text/csv', false],
];

/**
 * Where v1's API definition answers otherwise than the OGC pages: it sends its page to an Accept
 * that names text/html (weight above 0) and not application/json, as it always did, whatever
 * the weights of the other types.
 */
const DOCS_PAGE = new Map([
  ['text/*', false],
  ['application/json;q=0.5, text/html', false],
  ['text/html;q=0.5, */*', true],
  ['application/*;q=0.9, text/html;q=0.8', true],
]);

/** Every route that has a page shell, on data that exists (so a JSON answer would hold some). */
const SHELL_ROUTES = [
  '/api/v1/ogc',
  '/api/v1/ogc/conformance',
  '/api/v1/ogc/collections',
  '/api/v1/ogc/collections/hotspots',
  '/api/v1/ogc/collections/hotspots/queryables',
  '/api/v1/ogc/collections/hotspots/items',
  '/api/v1/ogc/collections/hotspots/items/h1',
  '/api/v1/ogc/collections/burnt-areas/items/101',
];

const isHtml = (r: Response) => /^text\/html/.test(r.headers.get('content-type') ?? '');

describe('one Accept reader decides page or JSON, by weight', () => {
  it.each(ACCEPTS)('Accept %j: page %s, on every OGC route with the key and on the API definition', async (accept, page) => {
    for (const path of SHELL_ROUTES) {
      const r = await server.get(path, { headers: { accept } });
      expect([r.status, isHtml(r)], `${path} ${accept}`).toEqual([200, page]);
      expect(r.headers.get('vary')).toMatch(/Accept/);
      await r.body?.cancel();
    }
    const docs = await fetch(`${server.url}/api/v1/docs`, { headers: { accept } });
    expect(isHtml(docs), `docs ${accept}`).toBe(DOCS_PAGE.get(accept) ?? page);
    await docs.body?.cancel();
  });

  it('f wins over Accept both ways', async () => {
    const json = await server.get('/api/v1/ogc/collections/hotspots/items?f=json', { headers: { accept: CHROME } });
    expect(json.headers.get('content-type')).toBe('application/geo+json');
    expect(((await json.json()) as { features: unknown[] }).features.length).toBeGreaterThan(0);
    const page = await fetch(`${server.url}/api/v1/ogc/collections/hotspots/items?f=html`, { headers: { accept: 'application/json' } });
    expect([page.status, isHtml(page)]).toEqual([200, true]);
    await page.body?.cancel();
  });
});

describe('no Accept trick skips the key', () => {
  const variants = ['', '?f=json', '?f=geojson', '?f=html&f=json', '?f=json&f=html', '?f=HTML', '?f=html%00', '?limit=1'];

  it('without a key, every route with a page shell answers either the shell (no data in it) or a 401', async () => {
    const accepts = [...ACCEPTS.map(([a]) => a), 'text/html, text/html;q=0', 'text/html;q=0, text/html', 'text/html;q=1.0;q=0', ' text/html ;q=1', 'text/html, application/json;q=1.0'];
    for (const path of SHELL_ROUTES) {
      for (const variant of variants) {
        for (const accept of accepts) {
          const r = await fetch(`${server.url}${path}${variant}`, { headers: { accept } });
          const body = await r.text();
          const where = `${path}${variant} ${accept}`;
          if (r.status === 401) {
            expect(r.headers.get('content-type'), where).toMatch(/^application\/problem\+json/);
            continue;
          }
          // A shell, or a 400/404 problem about the request itself: never a JSON document or a row.
          expect([200, 400, 404], where).toContain(r.status);
          if (r.status === 200) expect([isHtml(r), body.startsWith('<!doctype html>'), body.includes('id="key-form"')], where).toEqual([true, true, true]);
          expect(body, where).not.toMatch(/"links"|"features"|"conformsTo"|"properties"|acquiredAtUtc/);
        }
      }
    }
  });

  it('the data endpoints never answer a page, and always ask for the key', async () => {
    for (const accept of [CHROME, 'text/html']) {
      const r = await fetch(`${server.url}/api/v1/hotspots?from=2025-08-01&to=2025-08-02`, { headers: { accept } });
      expect(r.status).toBe(401);
      const keyed = await server.get('/api/v1/hotspots?from=2025-08-01&to=2025-08-02', { headers: { accept } });
      expect(keyed.headers.get('content-type')).toBe('application/geo+json');
      await keyed.body?.cancel();
    }
  });
});

describe('data only with a verified key', () => {
  it('a route that forgets to answer a page shell, so reaches its data without a key, fails closed (500), never with data', async () => {
    const app = Fastify();
    app.get('/forgetful', { config: { htmlShell: true } }, async (request) => {
      keyedOnly(request);
      return { features: ['secret row'] };
    });
    const r = await app.inject({ url: '/forgetful', headers: { accept: 'text/html' } });
    expect(r.statusCode).toBe(500);
    expect(r.body).not.toContain('secret row');
    await app.close();
  });
});
