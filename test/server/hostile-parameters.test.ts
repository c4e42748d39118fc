import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSampleData } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
const problem = async (path: string) => {
  const r = await server.get(path);
  const text = await r.text();
  return { status: r.status, type: r.headers.get('content-type'), bytes: Buffer.byteLength(text), body: JSON.parse(text) as any };
};

beforeAll(async () => {
  server = await startServer(await writeSampleData());
});
afterAll(() => server.close());

describe('hostile parameter values get a useful, bounded 400', () => {
  it.each(['../../etc', '', "x' OR 1=1--", 'cffdrs-era5%00', '%2e%2e', 'a'.repeat(300)])('model=%s: a 400 that lists the valid models and does not quote a value that cannot be one', async (model) => {
    const r = await problem(`/api/v1/fire-danger?model=${encodeURIComponent(model).replace('%2500', '%00')}`);
    expect(r.status).toBe(400);
    expect(r.type).toBe('application/problem+json; charset=utf-8');
    expect(r.body.errors).toEqual([{ parameter: 'model', message: 'unknown model; valid values: cffdrs-era5, effis-ecmwf' }]);
  });

  it('a well-formed unknown model is quoted back with the valid ones', async () => {
    const r = await problem('/api/v1/fire-danger?model=nope');
    expect(r.body.errors).toEqual([{ parameter: 'model', message: "unknown model 'nope'; valid values: cffdrs-era5, effis-ecmwf" }]);
  });

  it('3,000 unknown two-letter parameters give a body of a few kB: the first 10 listed, the rest counted', async () => {
    // Every two-letter name (676), repeated: a 9 kB URL.
    const names = Array.from({ length: 3000 }, (_, i) => String.fromCharCode(97 + Math.floor(i / 26) % 26) + String.fromCharCode(97 + (i % 26)));
    const r = await problem(`/api/v1/hotspots?${names.join('&')}`);
    expect(r.status).toBe(400);
    expect(r.bytes).toBeLessThan(8 * 1024);
    expect(r.body.errors).toHaveLength(10);
    expect(r.body.errors).toContainEqual({ parameter: 'aa', message: expect.stringMatching(/^unknown parameter; allowed: from, to, format/) });
    expect(r.body.detail).toMatch(/; and 666 more parameter errors not listed$/);
  });
});
