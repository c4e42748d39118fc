import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DATASETS, wireColumns } from '../../datasets/index.ts';
import { PROBLEM_KINDS } from '../../server/http/problems.ts';
import { datasetQuerySchema } from '../../server/params/query-params.ts';
import { writeSampleData } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

type Json = Record<string, any>;
let server: TestServer;
let dataDir: string;
const fetchDoc = async (query = ''): Promise<Json> => (await (await fetch(`${server.url}/api/v1/docs${query}`)).json()) as Json;

beforeAll(async () => {
  dataDir = await writeSampleData();
  server = await startServer(dataDir);
});
afterAll(() => server.close());

const pascal = (name: string) => name.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());

describe('GET /api/v1/docs', () => {
  it('serves a valid OpenAPI 3.0 document without a key', async () => {
    const r = await fetch(`${server.url}/api/v1/docs`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const doc = (await r.json()) as Json;
    expect(doc.openapi).toMatch(/^3\.0\.\d+$/);
    const validated = (await SwaggerParser.validate(structuredClone(doc) as never)) as Json;
    expect(validated.info.title).toBe('Research Read API');
  });

  it('serves the same document as YAML, and the page as HTML', async () => {
    const yaml = await fetch(`${server.url}/api/v1/docs?format=yaml`);
    expect(yaml.headers.get('content-type')).toBe('application/yaml; charset=utf-8');
    expect(parse(await yaml.text())).toEqual(await fetchDoc());
    const html = await fetch(`${server.url}/api/v1/docs?format=html`);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    const page = await html.text();
    for (const kind of Object.keys(PROBLEM_KINDS)) expect(page).toContain(`id="problem-${kind}"`);
    expect(page.match(/(?:src|href)="[^"]*"/g)?.every((a) => /="docs[?/]/.test(a))).toBe(true);
  });

  it('the YAML form loads to exactly the JSON document in a YAML 1.1 reader too (dates, yes/no and numeric keys stay strings)', async () => {
    const text = await (await fetch(`${server.url}/api/v1/docs?format=yaml`)).text();
    const doc = await fetchDoc();
    expect(parse(text, { version: '1.1' })).toEqual(doc);
    expect(parse(text, { version: '1.2' })).toEqual(doc);
  });

  it('a browser following a problem type link gets the page; everything else gets JSON', async () => {
    const browser = await fetch(`${server.url}/api/v1/docs`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(browser.headers.get('content-type')).toMatch(/^text\/html/);
    expect(browser.headers.get('vary')).toBe('Accept');
    await browser.body?.cancel();
    expect((await fetch(`${server.url}/api/v1/docs`, { headers: { accept: '*/*' } })).headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('rejects an unknown format or parameter with a 400 problem naming it', async () => {
    const r = await fetch(`${server.url}/api/v1/docs?format=pdf&v=2`);
    expect(r.status).toBe(400);
    expect(((await r.json()) as Json).errors.map((e: Json) => e.parameter)).toEqual(['format', 'v']);
  });

  it('serves the page assets from the installed package, and 404s any other name', async () => {
    const js = await fetch(`${server.url}/api/v1/docs/assets/swagger-ui-bundle.js`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await js.text()).length).toBeGreaterThan(100_000);
    for (const bad of ['package.json', '..%2Fpackage.json', 'constructor']) expect((await fetch(`${server.url}/api/v1/docs/assets/${bad}`)).status).toBe(404);
  });
});

describe('the document says what the code does', () => {
  it('lists the model values present in DATA_DIR at request time, default first', async () => {
    const modelParam = async () => ((await fetchDoc()).paths['/api/v1/fire-danger'].get.parameters as Json[]).find((p) => p.name === 'model')!;
    expect((await modelParam()).schema).toMatchObject({ enum: ['cffdrs-era5', 'effis-ecmwf'], default: 'cffdrs-era5' });
    await mkdir(path.join(dataDir, 'fire-danger/model=aaa-new'), { recursive: true });
    expect((await modelParam()).schema).toMatchObject({ enum: ['aaa-new', 'cffdrs-era5', 'effis-ecmwf'], default: 'aaa-new' });
  });

  it('documents exactly the parameters the validator accepts, with defaults and allowed values', async () => {
    const doc = await fetchDoc();
    for (const d of DATASETS) {
      const params = doc.paths[`/api/v1/${d.name}`].get.parameters as Json[];
      expect(params.filter((p) => p.in === 'query').map((p) => p.name)).toEqual(Object.keys(datasetQuerySchema(d).shape));
      for (const o of d.options) expect(params.find((p) => p.name === o.param)!.schema).toMatchObject({ enum: [...o.allowed], default: o.defaultValue });
    }
    const level = (doc.paths['/api/v1/fire-danger'].get.parameters as Json[]).find((p) => p.name === 'level')!;
    expect(level.schema).toMatchObject({ enum: ['country', 'adminArea'], default: 'country' });
  });

  it('documents every wire column of every dataset with type, unit and nullability, and the CSV columns in order', async () => {
    const doc = await fetchDoc();
    const type = { VARCHAR: 'string', DOUBLE: 'number', INTEGER: 'integer', BIGINT: 'integer', BOOLEAN: 'boolean', TIMESTAMPTZ: 'string' } as const;
    for (const d of DATASETS) {
      const props = doc.components.schemas[`${pascal(d.name)}Properties`].properties as Json;
      expect(Object.keys(props)).toEqual(wireColumns(d).map((c) => c.name));
      for (const c of wireColumns(d)) {
        expect(props[c.name].type, `${d.name}.${c.name}`).toBe(type[c.type as keyof typeof type]);
        expect(props[c.name]['x-unit']).toBe(c.unit);
        if (c.nullable) expect(props[c.name].nullable, `${d.name}.${c.name}`).toBe(true);
        if (!c.nullable && c.type !== 'DOUBLE') expect(props[c.name].nullable, `${d.name}.${c.name}`).toBeUndefined();
      }
      const csv = doc.paths[`/api/v1/${d.name}`].get.responses['200'].content['text/csv'];
      expect(csv['x-csv-columns']).toEqual(wireColumns(d).map((c) => c.name));
    }
  });

  it('documents Parquet and Arrow on every data operation, with the columns in CSV order plus geometry where rows carry one', async () => {
    const doc = await fetchDoc();
    for (const d of DATASETS) {
      const content = doc.paths[`/api/v1/${d.name}`].get.responses['200'].content as Json;
      const geometry = d.geometry.kind === 'point' || d.geometry.kind === 'wkb' ? ['geometry'] : [];
      for (const media of ['application/vnd.apache.parquet', 'application/vnd.apache.arrow.stream']) {
        expect(content[media]?.schema, `${d.name} ${media}`).toMatchObject({ type: 'string', format: 'binary' });
        const names = (content[media]['x-columns'] as string[]).map((c) => c.split('`')[1]);
        expect(names, `${d.name} ${media}`).toEqual([...wireColumns(d).map((c) => c.name), ...geometry]);
        expect(content[media].schema.description).toContain('fire_api:meta');
      }
    }
  });

  it('documents every status of a data endpoint with its problem body and headers, and the bearer and Basic schemes', async () => {
    const doc = await fetchDoc();
    expect(doc.components.securitySchemes.bearerAuth).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(doc.components.securitySchemes.basicAuth).toEqual(expect.objectContaining({ type: 'http', scheme: 'basic' }));
    for (const d of DATASETS) {
      const op = doc.paths[`/api/v1/${d.name}`].get;
      expect(op.security).toEqual([{ bearerAuth: [] }, { basicAuth: [] }]);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '304', '400', '401', '403', '429', '503']));
      expect(Object.keys(op.responses['200'].headers)).toEqual(expect.arrayContaining(['ETag', 'Vary', 'X-Truncated', 'X-Returned', 'X-Data-Version', 'X-RateLimit-Remaining']));
    }
    expect(Object.keys(doc.components.responses.RateLimited.headers)).toContain('Retry-After');
    expect(Object.keys(doc.components.responses.Unavailable.headers)).toContain('Retry-After');
    expect(Object.keys(doc.components.responses.Unauthorized.headers)).toContain('WWW-Authenticate');
    expect(doc.components.responses.NotFound.content['application/problem+json']).toBeDefined();
    expect(doc.paths['/api/v1/docs'].get.security).toEqual([]);
    for (const word of ['half-open, [from, to)', 'from=next.from', '200 versus 503']) expect(doc.info.description).toContain(word);
  });
});
