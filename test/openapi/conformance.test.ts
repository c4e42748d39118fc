import { Readable } from 'node:stream';
import Fastify from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../server/openapi/document.ts';
import { rawGet } from '../helpers/http.ts';
import { checkConformance } from './conformance-hook.ts';
import { ContractChecker, type SentResponse } from './contract-checker.ts';

const doc = buildOpenApiDocument({ folderValues: { 'fire-danger': ['m1'] }, rowLimit: 10, rateLimitPerMinute: 120 });
let checker: ContractChecker;
beforeAll(async () => {
  checker = await ContractChecker.create(doc);
});

const DATA_HEADERS = {
  'content-type': 'application/geo+json',
  vary: 'Authorization',
  etag: 'W/"abc"',
  'x-truncated': 'false',
  'x-row-limit': '10',
  'x-returned': '1',
  'x-data-version': `sha256:${'a'.repeat(64)}`,
  'x-query': '{}',
};
const META = { dataset: 'sensor-stations', window: null, query: { simulated: null, stationId: null }, truncated: false, rowLimit: 10, returned: 1, next: null, observation: { chainRan: false, lastSuccessUtc: null, ageSeconds: null }, dataVersion: `sha256:${'a'.repeat(64)}` };
const PROPS = { stationId: 'S1', name: null, latitude: 40.1, longitude: -7.9, elevationM: 420, simulated: true, installedAtUtc: '2024-01-01T00:00:00.5Z' };
const stations = (over: { status?: number; headers?: Record<string, unknown>; props?: object; body?: string | null } = {}): SentResponse => ({
  method: 'GET',
  route: '/api/v1/sensor-stations',
  status: over.status ?? 200,
  headers: over.headers ?? DATA_HEADERS,
  body:
    over.body !== undefined
      ? over.body
      : JSON.stringify({ type: 'FeatureCollection', meta: META, features: [{ type: 'Feature', id: 'S1', geometry: { type: 'Point', coordinates: [-7.9, 40.1] }, properties: over.props ?? PROPS }] }),
});

describe('the conformance check fails what the document does not describe', () => {
  it('passes a response that matches the document', () => {
    expect(checker.check(stations())).toEqual([]);
  });

  it('an undocumented field', () => {
    expect(checker.check(stations({ props: { ...PROPS, secret: 1 } })).join()).toMatch(/must NOT have additional properties.*secret/);
  });

  it('a wrong type, a null where the column is not nullable, a malformed timestamp', () => {
    expect(checker.check(stations({ props: { ...PROPS, simulated: 'yes' } })).join()).toMatch(/simulated must be boolean/);
    expect(checker.check(stations({ props: { ...PROPS, stationId: null } })).join()).toMatch(/stationId/);
    expect(checker.check(stations({ props: { ...PROPS, installedAtUtc: '2024-01-01 00:00' } })).join()).toMatch(/installedAtUtc/);
  });

  it('an undocumented status, route or content type', () => {
    expect(checker.check(stations({ status: 418 }))).toEqual(['status 418 is not documented for GET /api/v1/sensor-stations']);
    expect(checker.check({ ...stations(), route: '/api/v1/secret' })).toEqual(['route GET /api/v1/secret is not in the document']);
    expect(checker.check({ ...stations(), route: undefined })).toEqual(['status 200 for a path no route matches']);
    expect(checker.check(stations({ headers: { ...DATA_HEADERS, 'content-type': 'application/json' } })).join()).toMatch(/content type 'application\/json' is not documented/);
  });

  it('a missing required header, or an undocumented X- header', () => {
    const { 'x-returned': _omitted, ...rest } = DATA_HEADERS;
    expect(checker.check(stations({ headers: rest })).join()).toMatch(/required header x-returned missing/);
    expect(checker.check(stations({ headers: { ...DATA_HEADERS, 'x-debug': '1' } })).join()).toMatch(/undocumented header x-debug/);
  });

  it('a CSV header row that is not the documented columns', () => {
    const csv = (body: string) => stations({ headers: { ...DATA_HEADERS, 'content-type': 'text/csv; charset=utf-8' }, body });
    expect(checker.check(csv('stationId,name,latitude,longitude,elevationM,simulated,installedAtUtc\nS1,,1,2,3,true,\n'))).toEqual([]);
    expect(checker.check(csv('stationId,name,latitude,longitude,elevationM,simulated,installedAtUtc,extra\n')).join()).toMatch(/CSV header row/);
    expect(checker.check(csv('name,stationId,latitude,longitude,elevationM,simulated,installedAtUtc\n')).join()).toMatch(/CSV header row/);
  });

  it('a problem body that is not the documented one for its status', () => {
    const problem = { type: '/api/v1/docs#problem-unauthorized', title: 'A valid key is required', status: 401, detail: 'd', instance: '/api/v1/sensor-stations', requestId: 'r', code: 'unauthorized' };
    const sent = (body: object, headers: object = { 'content-type': 'application/problem+json; charset=utf-8', 'www-authenticate': 'Bearer' }) =>
      stations({ status: 401, headers: headers as Record<string, unknown>, body: JSON.stringify(body) });
    expect(checker.check(sent(problem))).toEqual([]);
    expect(checker.check(sent({ ...problem, type: '/api/v1/docs#problem-forbidden' })).join()).toMatch(/type/);
    expect(checker.check(sent({ ...problem, errors: [] })).join()).toMatch(/additional properties/);
    expect(checker.check(sent(problem, { 'content-type': 'application/problem+json' })).join()).toMatch(/www-authenticate missing/);
  });
});

describe('the hook checks what a Fastify app really sends', () => {
  it('records a streamed body with an undocumented field, and close reports it', async () => {
    const app = Fastify();
    app.get('/api/v1/docs', async () => doc);
    app.get('/api/v1/sensor-stations', async (_req, reply) => {
      const body = JSON.stringify({ type: 'FeatureCollection', meta: META, features: [{ type: 'Feature', id: 'S1', geometry: null, properties: { ...PROPS, extra: 1 } }] });
      return reply.headers(DATA_HEADERS).send(Readable.from([body.slice(0, 50), body.slice(50)]));
    });
    const conformance = await checkConformance(app);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const r = await rawGet(`http://127.0.0.1:${port}/api/v1/sensor-stations`);
    await app.close();
    expect(r).toMatchObject({ status: 200, complete: true });
    expect(conformance.checked()).toBe(1);
    expect(() => conformance.assertClean()).toThrow(/GET \/api\/v1\/sensor-stations → 200: body\/features\/0\/properties must NOT have additional properties/);
  });

  it('does not report a stream that failed: it was never a response', async () => {
    const app = Fastify();
    app.get('/api/v1/docs', async () => doc);
    app.get('/api/v1/sensor-stations', async (_req, reply) => {
      async function* failing() {
        yield '{"type":"FeatureCollection","extra":';
        throw new Error('disk gone');
      }
      return reply.headers(DATA_HEADERS).send(Readable.from(failing()));
    });
    const conformance = await checkConformance(app);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const r = await rawGet(`http://127.0.0.1:${port}/api/v1/sensor-stations`);
    await app.close();
    expect(r.complete).toBe(false);
    expect(conformance.violations).toEqual([]);
  });
});
