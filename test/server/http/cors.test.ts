import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium as playwright } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { chromium, needService } from '../../helpers/services.ts';

const DATA = '/api/v1/hotspots?from=2025-08-01&to=2025-08-03&format=csv';
const PAGE_ORIGIN = 'http://localhost:9';

let open: TestServer;
let listed: TestServer;
beforeAll(async () => {
  const dir = await writeSampleData();
  open = await startServer(dir);
  listed = await startServer(dir, { CORS_ORIGINS: 'https://notebook.example.org, http://localhost:8888', TEMP_DIR: `${dir}/.tmp-listed` });
});
afterAll(async () => {
  await Promise.all([open?.close(), listed?.close()]);
});

const preflight = (server: TestServer, path: string, origin: string) =>
  fetch(`${server.url}${path}`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } });

describe('CORS on /api/v1', () => {
  it('a preflight is answered 204 without a key, allowing Authorization, and costs no rate limit', async () => {
    const before = await open.get(DATA);
    await before.body?.cancel();
    const r = await preflight(open, DATA, PAGE_ORIGIN);
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-allow-methods')).toBe('GET, HEAD');
    expect(r.headers.get('access-control-allow-headers')).toMatch(/\bAuthorization\b/);
    expect(r.headers.get('x-ratelimit-remaining')).toBeNull();
    const after = await open.get(DATA);
    await after.body?.cancel();
    expect(Number(after.headers.get('x-ratelimit-remaining'))).toBe(Number(before.headers.get('x-ratelimit-remaining')) - 1);
  });

  it('answers, problems included, say who may read them and expose meta, validators, limits and Retry-After', async () => {
    const ok = await open.get(DATA, { headers: { origin: PAGE_ORIGIN } });
    await ok.body?.cancel();
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
    const exposed = ok.headers.get('access-control-expose-headers') ?? '';
    for (const h of ['ETag', 'Link', 'Retry-After', 'X-Returned', 'X-Next-From', 'X-Data-Version', 'X-RateLimit-Remaining']) expect(exposed).toContain(h);
    const refused = await fetch(`${open.url}${DATA}`, { headers: { origin: PAGE_ORIGIN } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    expect(refused.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
  });

  it('with CORS_ORIGINS listed: a listed origin is named back with Vary: Origin, another gets no grant', async () => {
    const ok = await listed.get(DATA, { headers: { origin: 'http://localhost:8888' } });
    await ok.body?.cancel();
    expect(ok.headers.get('access-control-allow-origin')).toBe('http://localhost:8888');
    expect(ok.headers.get('vary')).toBe('Accept, Accept-Encoding, Authorization, Origin');
    const other = await listed.get(DATA, { headers: { origin: 'https://evil.example' } });
    await other.body?.cancel();
    expect(other.status).toBe(200);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect((await preflight(listed, DATA, 'https://evil.example')).status).toBe(404);
    expect((await preflight(listed, DATA, 'https://notebook.example.org')).status).toBe(204);
  });

  it('OPTIONS that is not a preflight, or outside /api/v1, is the 404 it always was', async () => {
    expect((await fetch(`${open.url}${DATA}`, { method: 'OPTIONS' })).status).toBe(404);
    expect((await preflight(open, '/healthz', PAGE_ORIGIN)).status).toBe(404);
    const health = await fetch(`${open.url}/healthz`, { headers: { origin: PAGE_ORIGIN } });
    expect(health.headers.get('access-control-allow-origin')).toBeNull();
  });
});

/** A page on its own origin that reads a data endpoint of `api` with the key, as a notebook or web map would. */
async function crossOriginRead(executablePath: string, api: TestServer): Promise<{ ok: boolean; status?: number; returned?: string | null; rows?: number; error?: string }> {
  const page = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>notebook</title>'));
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  const pageUrl = `http://localhost:${(page.address() as AddressInfo).port}/`;
  const browser = await playwright.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const tab = await browser.newPage();
    await tab.goto(pageUrl);
    return await tab.evaluate(async ([url, key]) => {
      try {
        const r = await fetch(url!, { headers: { authorization: `Bearer ${key}` } });
        const text = await r.text();
        return { ok: true, status: r.status, returned: r.headers.get('x-returned'), rows: text.trim().split('\n').length - 1 };
      } catch (e) {
        return { ok: false, error: String(e) };
      }
    }, [`${api.url}${DATA}`, api.key]);
  } finally {
    await browser.close();
    page.close();
  }
}

describe('a page on another origin in Chromium', () => {
  it('reads a data endpoint with its key and sees X-Returned; an origin not in CORS_ORIGINS cannot', async (ctx) => {
    const executablePath = needService(ctx, chromium());
    const read = await crossOriginRead(executablePath, open);
    expect(read).toMatchObject({ ok: true, status: 200 });
    expect(Number(read.returned)).toBe(read.rows);
    expect(read.rows).toBeGreaterThan(0);
    const refused = await crossOriginRead(executablePath, listed);
    expect(refused.ok).toBe(false);
  });
});
