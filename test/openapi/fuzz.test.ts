import os from 'node:os';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_B, publish } from '../helpers/corrections.ts';
import { rawExchange } from '../helpers/raw-http.ts';
import { writeSampleData } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { ContractChecker } from './contract-checker.ts';

/**
 * Requests generated from the served OpenAPI document and from hostile strings, against a real
 * server on real Parquet. Seeded (a failure names its seed and shrunk counterexample), and a fixed
 * number of runs, all of them made: docs/testing.md promises 1,150 requests, and a time limit
 * would shrink the test silently on a slow machine.
 */
const SEED = 20261123;
const RUNS = { generated: 800, corrections: 150, raw: 200 };
const PUBLISHED_MODEL = 'humidity-bias-2025.1';

type Json = Record<string, any>;
let server: TestServer;
let dataDir: string;
let checker: ContractChecker;
let doc: Json;

beforeAll(async () => {
  dataDir = await writeSampleData();
  // A published correction model under the id the document gives as correctionModel's example.
  await publish(dataDir, { ...MODEL_B, id: PUBLISHED_MODEL });
  server = await startServer(dataDir, { AUTH_FAILURES_PER_MINUTE: '100000', REQUEST_TIMEOUT_MS: '2000' });
  doc = (await (await fetch(`${server.url}/api/v1/docs`)).json()) as Json;
  checker = await ContractChecker.create(doc);
}, 60_000);
afterAll(() => server.close());

const HOSTILE = [
  '', ' ', '0001-01-01', '0000-12-31', '9999-12-31T23:59:59.999999Z', '10000-01-01', '2025-02-30', '2025-08-01T24:00', '2025-08-01T12:00:60Z',
  '2025-08-01T12:00+18:00', '2025-08-01T12:00-18:59', '0001-01-01T00:00+00:01', '9999-12-31T23:59-00:01', '2025-08-01T12:00:00.1234567Z', '2025-08-01t12:00Z',
  '2025-8-1', '-1', '1e308', 'NaN', 'null', 'true', 'FALSE', 'csv', 'CSV', 'geojson', 'parquet', '../../etc/passwd', '..%2f..%2fetc', "x' OR 1=1--", '"; DROP TABLE x; --',
  '%00', '\u0000', '\u0001', '\u202e', '\ufeff', '😀', 'ä', 'a'.repeat(3000), '%', '%zz', '[]', '{}', '$(id)', '${jndi:x}', '*', ',', ',,', 'PT,ES',
  '-180,-90,180,90', '180,-90,-180,90', '1,2,3', 'ST0001', 'cffdrs-era5', 'country', 'adminArea', 'raw', 'corrected',
];

/** Parameter names and example values of a path, from the document. */
function documented(path: string): { names: string[]; values: string[] } {
  const params = (doc.paths[templates.get(path) ?? path]?.get?.parameters ?? []) as Json[];
  const query = params.filter((p) => p.in === 'query');
  const values = query.flatMap((p) => [...(p.schema?.enum ?? []), p.example, p.schema?.example, p.schema?.default].filter((v) => v !== undefined).map(String));
  return { names: query.map((p) => String(p.name)), values };
}

/** Concrete paths of templated ones (the OGC collections: each dataset, and one that is none), to their template. */
const templates = new Map<string, string>();
const paths = () => {
  for (const template of Object.keys(doc.paths).filter((p) => p.includes('{collectionId}'))) {
    for (const id of ['hotspots', 'burnt-areas', 'fire-danger', 'sensor-stations', 'sensor-readings', 'nope', '..', '%2e%2e%2fkeys.json']) {
      for (const feature of ['h1', '1', '-1', '99999999999999999999', 'x%27%20OR%201%3D1--', '%00', 'ST0001']) templates.set(template.replace('{collectionId}', id).replace('{featureId}', feature), template);
    }
  }
  return [...Object.keys(doc.paths).filter((p) => !p.includes('{')), ...templates.keys()];
};
const HOSTILE_PATHS = ['/api/v1/HOTSPOTS', '/api/v1/hotspots/', '/api/v1/%2e%2e/keys.json', '/api/v1/docs/assets/..%2f..%2fpackage.json', '/api/v1/docs/assets/x', '/api/v2/hotspots', '//api/v1/hotspots', '/api/v1/hotspots%00', '/api/v1/hotspots;x', '/'];

const value = (fromDoc: string[]) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...(fromDoc.length ? fromDoc : ['x'])) },
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE) },
    { weight: 1, arbitrary: fc.string({ maxLength: 24, unit: 'grapheme' }) },
    { weight: 1, arbitrary: fc.string({ maxLength: 24, unit: 'binary-ascii' }) },
  );

/** name=value pairs: documented names (repeated sometimes), unknown names, odd encodings. */
function queryArb(path: string) {
  const { names, values } = documented(path);
  const name = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...(names.length ? names : ['format'])) }, { weight: 1, arbitrary: fc.constantFrom('x', 'key', 'api_key', 'FROM', 'from[]', '__proto__', 'constructor', '') }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) });
  const pair = fc.tuple(name, value(values), fc.constantFrom('encoded', 'encoded', 'raw-percent'));
  return fc.array(pair, { maxLength: 6 }).map((pairs) =>
    pairs.map(([n, v, how]) => (how === 'raw-percent' ? `${encodeURIComponent(n)}=${encodeURIComponent(v).replaceAll('%25', '%')}` : `${encodeURIComponent(n)}=${encodeURIComponent(v)}`)).join('&'),
  );
}

interface Generated {
  path: string;
  query: string;
  method: string;
  auth: 'valid' | 'none' | 'garbage' | 'other-scheme' | 'lowercase-scheme';
  headers: Record<string, string>;
  body: string | null;
}

function requestArb(): fc.Arbitrary<Generated> {
  const path = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...paths()) }, { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_PATHS) });
  return path.chain((p) =>
    fc.record({
      path: fc.constant(p),
      query: queryArb(p),
      method: fc.oneof({ weight: 8, arbitrary: fc.constant('GET') }, { weight: 2, arbitrary: fc.constant('HEAD') }, { weight: 2, arbitrary: fc.constantFrom('POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'QUERY') }),
      auth: fc.constantFrom('valid', 'valid', 'valid', 'none', 'garbage', 'other-scheme', 'lowercase-scheme'),
      headers: fc.record(
        {
          accept: fc.constantFrom('*/*', 'text/html', 'application/json', 'text/csv', 'application/vnd.apache.parquet', 'application/vnd.apache.arrow.stream', 'garbage/;;', ''),
          'if-none-match': fc.constantFrom('*', '"x"', 'W/"abc"', '"' + 'a'.repeat(200) + '"', ''),
          'content-type': fc.constantFrom('application/json', 'text/plain', 'foo/bar', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'),
        },
        { requiredKeys: [] },
      ),
      body: fc.option(fc.constantFrom('', '{}', '{x}', 'a=1', 'x'.repeat(200_000)), { nil: null }),
    }),
  );
}

function authHeader(g: Generated): Record<string, string> {
  const map = { valid: `Bearer ${server.key}`, none: undefined, garbage: 'Bearer frk_nope_nope', 'other-scheme': `Basic ${server.key}`, 'lowercase-scheme': `bearer ${server.key}` } as const;
  const v = map[g.auth];
  return v === undefined ? {} : { authorization: v };
}

/** What no answer may contain: the key (or its secret part) and the server's own paths. */
function leaks(text: string): string[] {
  const secrets = [server.key, server.key.slice(13), dataDir, server.keysFile, os.tmpdir() + '/'];
  return secrets.filter((s) => text.includes(s));
}

describe('fuzzing from the OpenAPI document and hostile strings', () => {
  it('no 5xx, every error is documented problem+json, every answer matches the document, nothing leaks', async () => {
    const statuses = new Map<number, number>();
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(requestArb(), async (g) => {
        runs++;
        const before = server.violations.length;
        const hasBody = g.body !== null && !['GET', 'HEAD'].includes(g.method);
        const r = await fetch(`${server.url}${g.path}${g.query ? `?${g.query}` : ''}`, { method: g.method, headers: { ...g.headers, ...authHeader(g) }, body: hasBody ? g.body : undefined });
        const text = await r.text();
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        expect(r.status).toBeLessThan(500);
        if (r.status >= 400) {
          expect(r.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
          if (g.method !== 'HEAD') expect(checker.checkProblem(text)).toEqual([]);
        }
        expect(leaks(text + JSON.stringify([...r.headers]))).toEqual([]);
        expect(server.violations.slice(before)).toEqual([]);
      }),
      { seed: SEED, numRuns: RUNS.generated },
    );
    expect(runs).toBe(RUNS.generated);
    // The generated requests reach data as well as errors: a run of nothing but 400s would check little.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(30);
    expect([...statuses.keys()].filter((s) => s >= 400).length).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it('the correction layer (series, correctionModel, the models listed) answers documented 200s and 400s, never a 5xx', async () => {
    const statuses = new Map<string, number>();
    let runs = 0;
    const hostile = fc.constantFrom('humidity-bias-2025.0', '', '..', '../keys', 'a'.repeat(65), "x' OR 1=1--", '%00', '😀', 'ST0001');
    const model = fc.oneof({ weight: 2, arbitrary: fc.constant(PUBLISHED_MODEL) }, { weight: 1, arbitrary: hostile }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) });
    const request = fc.record({
      path: fc.constantFrom('/api/v1/sensor-readings', '/api/v1/sensor-readings/corrections', '/api/v1/ogc/collections/sensor-readings/items'),
      series: fc.option(fc.constantFrom('raw', 'corrected', 'corrected', 'CORRECTED', ''), { nil: undefined, freq: 4 }),
      model: fc.option(model, { nil: undefined }),
      format: fc.constantFrom('', 'csv'),
      accept: fc.constantFrom('*/*', 'application/vnd.apache.parquet', 'application/vnd.apache.arrow.stream'),
    });
    await fc.assert(
      fc.asyncProperty(request, async (g) => {
        runs++;
        const before = server.violations.length;
        const q = new URLSearchParams({ from: '2025-08-01', to: '2025-08-02' });
        if (g.path.endsWith('/corrections')) q.delete('from'), q.delete('to');
        if (g.series !== undefined) q.set('series', g.series);
        if (g.model !== undefined) q.set('correctionModel', g.model);
        if (g.format) q.set('format', g.format);
        const r = await fetch(`${server.url}${g.path}${q.size ? `?${q}` : ''}`, { headers: { accept: g.accept, authorization: `Bearer ${server.key}` } });
        const text = await r.text();
        statuses.set(`${g.path} ${r.status}`, (statuses.get(`${g.path} ${r.status}`) ?? 0) + 1);
        expect(r.status).toBeLessThan(500);
        if (r.status >= 400) expect(checker.checkProblem(text)).toEqual([]);
        if (r.status === 200 && g.model === PUBLISHED_MODEL && g.path === '/api/v1/sensor-readings') {
          expect(r.headers.get('x-query')).toContain(`"correctionModel":"${PUBLISHED_MODEL}"`);
          statuses.set('pinned 200', (statuses.get('pinned 200') ?? 0) + 1);
        }
        expect(leaks(text + JSON.stringify([...r.headers]))).toEqual([]);
        expect(server.violations.slice(before)).toEqual([]);
      }),
      { seed: SEED, numRuns: RUNS.corrections },
    );
    expect(runs).toBe(RUNS.corrections);
    expect(statuses.get('pinned 200') ?? 0).toBeGreaterThan(3);
    expect(statuses.get('/api/v1/sensor-readings 400') ?? 0).toBeGreaterThan(3);
    expect(statuses.get('/api/v1/sensor-readings/corrections 200') ?? 0).toBeGreaterThan(0);
  }, 60_000);

  it('raw requests (bad methods, control bytes, huge or broken headers) get documented problem+json, never a 5xx or a hang', async () => {
    const line = fc.record({
      method: fc.constantFrom('GET', 'get', 'HEAD', 'PRI', 'FOO', 'G\u0001T', 'QUERY', 'DELETE'),
      target: fc.constantFrom('/api/v1/hotspots', '/api/v1/docs', '/readyz', '*', 'http://x/api/v1/hotspots', '/api/v1/hotspots?from=%zz', `/api/v1/hotspots?x=${'a'.repeat(20_000)}`, '/\u0000'),
      version: fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 x'),
      header: fc.constantFrom('', 'X-A: a\u0001b', 'X-A: a\r\n b', `X-Big: ${'b'.repeat(20_000)}`, 'Transfer-Encoding: chunked\r\nContent-Length: 3', 'Content-Length: -1', 'Content-Length: 1, 2', 'Host: a\r\nHost: b', ': empty-name', 'Authorization: Bearer \u00ff'),
      auth: fc.boolean(),
    });
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(line, async (l) => {
        runs++;
        const auth = l.auth ? `Authorization: Bearer ${server.key}\r\n` : '';
        const bytes = `${l.method} ${l.target} ${l.version}\r\nHost: localhost\r\n${auth}${l.header ? `${l.header}\r\n` : ''}Connection: close\r\n\r\n`;
        const a = await rawExchange(server.url, bytes, 10_000);
        expect(a.status).toBeGreaterThan(0);
        expect(a.status).toBeLessThan(500);
        if (a.status >= 400 && l.method !== 'HEAD') {
          expect(a.headers['content-type']).toBe('application/problem+json; charset=utf-8');
          expect(checker.checkProblem(a.body)).toEqual([]);
        }
        expect(leaks(a.body)).toEqual([]);
      }),
      { seed: SEED, numRuns: RUNS.raw },
    );
    expect(runs).toBe(RUNS.raw);
    expect(server.violations).toEqual([]);
  }, 60_000);
});
