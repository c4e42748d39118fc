import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium as playwright } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/fixtures.ts';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { chromium, curl, gdal, needService, python3 } from '../../helpers/services.ts';

const run = promisify(execFile);

/** Streamed in groups of 1,000 rows: chunked, its length unknown until the end. */
const CSV_WINDOW = '/api/v1/hotspots?from=2025-07-01&to=2025-07-04&format=csv';
const GEOJSON_WINDOW = '/api/v1/hotspots?from=2025-07-01&to=2025-07-04';

let server: TestServer;
/** The CSV as it is, for every decoded body to equal. */
let identityCsv: string;

beforeAll(async () => {
  const dir = path.join(path.dirname(await writeSampleData()), `clients-${Date.now()}`);
  for (const date of ['2025-07-01', '2025-07-02', '2025-07-03']) await writeBulkHotspots(path.join(dir, `hotspots/date=${date}/part-0.parquet`), date, 3000, 3, 20);
  server = await startServer(dir, { GROUP_ROWS: '1000' });
  const plain = await server.get(CSV_WINDOW, { headers: { 'accept-encoding': 'identity' } });
  expect(plain.headers.get('content-encoding')).toBeNull();
  identityCsv = await plain.text();
});
afterAll(async () => {
  await server?.close();
});

/** The wire bytes the server counted for `dataset` so far. */
async function sentBytes(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return Number(/^fire_api_response_bytes_total\{dataset="hotspots"\} (\d+)/m.exec(text)?.[1] ?? 0);
}

describe('real HTTP clients decode compressed bodies to the same bytes', () => {
  it("Node's fetch (asks for gzip, deflate) gets gzip and decodes it", async () => {
    const r = await server.get(CSV_WINDOW);
    expect(r.headers.get('content-encoding')).toBe('gzip');
    expect(await r.text()).toBe(identityCsv);
  });

  it('curl --compressed gets br (or gzip) and writes the identity bytes; curl without it gets identity', async (ctx) => {
    const program = needService(ctx, curl());
    const dir = await tempDir('fire-api-curl-');
    const args = (extra: string[]) => ['-sS', '--fail', '-H', `Authorization: Bearer ${server.key}`, '-D', path.join(dir, 'headers'), '-o', path.join(dir, 'body'), ...extra, `${server.url}${CSV_WINDOW}`];
    await run(program, args(['--compressed']));
    expect((await readFile(path.join(dir, 'headers'), 'latin1')).toLowerCase()).toMatch(/^content-encoding: (br|gzip)\r$/m);
    expect(await readFile(path.join(dir, 'body'), 'utf8')).toBe(identityCsv);
    await run(program, args([]));
    expect((await readFile(path.join(dir, 'headers'), 'latin1')).toLowerCase()).not.toMatch(/^content-encoding:/m);
    expect(await readFile(path.join(dir, 'body'), 'utf8')).toBe(identityCsv);
  });

  it("Python's urllib asking for gzip, decoded with its gzip module", async (ctx) => {
    const program = needService(ctx, python3());
    const script = [
      'import gzip, sys, urllib.request',
      'req = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer " + sys.argv[2], "Accept-Encoding": "gzip"})',
      'res = urllib.request.urlopen(req)',
      'assert res.headers["Content-Encoding"] == "gzip", res.headers["Content-Encoding"]',
      'sys.stdout.buffer.write(gzip.decompress(res.read()))',
    ].join('\n');
    const { stdout } = await run(program, ['-c', script, `${server.url}${CSV_WINDOW}`, server.key], { maxBuffer: 64 * 1024 * 1024 });
    expect(stdout).toBe(identityCsv);
  });

  it('GDAL (ogrinfo on the GeoJSON URL) asks for gzip, decodes it and reads every feature', async (ctx) => {
    const program = needService(ctx, gdal());
    const before = await sentBytes();
    const plainBytes = Buffer.byteLength(await (await server.get(GEOJSON_WINDOW, { headers: { 'accept-encoding': 'identity' } })).text());
    const afterPlain = await sentBytes();
    const { stdout } = await run(program, ['-ro', '-al', '-geom=NO', `${server.url}${GEOJSON_WINDOW}`], {
      env: { ...process.env, GDAL_HTTP_HEADERS: `Authorization: Bearer ${server.key}` },
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(/Feature Count: (\d+)/.exec(stdout)?.[1]).toBe('9000');
    const ids = [...stdout.matchAll(/^ {2}id \(String\) = (.+)$/gm)].map((m) => m[1]);
    expect(ids).toEqual(identityCsv.trim().split('\n').slice(1).map((line) => line.split(',')[0]));
    // GDAL's request was answered coded: far fewer bytes crossed than the identity body has.
    const gdalBytes = (await sentBytes()) - afterPlain;
    expect(afterPlain - before).toBe(plainBytes);
    expect(gdalBytes).toBeLessThan(plainBytes / 3);
  });

  it("Chromium's fetch from a page decodes the body to the same rows", async (ctx) => {
    const executablePath = needService(ctx, chromium());
    const browser = await playwright.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] });
    try {
      const page = await browser.newPage();
      // A page of the API's own origin: the request is same-origin whatever the CORS settings.
      await page.goto(`${server.url}/healthz`);
      const got = await page.evaluate(async ([url, key]) => {
        const r = await fetch(url!, { headers: { authorization: `Bearer ${key}` } });
        return { coding: r.headers.get('content-encoding'), text: await r.text() };
      }, [`${server.url}${CSV_WINDOW}`, server.key]);
      expect(got.coding).toMatch(/^(br|gzip)$/);
      expect(got.text).toBe(identityCsv);
    } finally {
      await browser.close();
    }
  });
});
