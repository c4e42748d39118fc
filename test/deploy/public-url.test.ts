import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { linkHeaderTargets, pageLinks } from '../helpers/links.ts';
import { writeBulkHotspots } from '../helpers/parquet.ts';
import { writeSampleData } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { exploreUrl, openView, settled, shownCount, withBrowser } from '../helpers/explore-browser.ts';
import { chromium, gdal, needService, nginx } from '../helpers/services.ts';
import { SHIPPED_CONF, shippedConfig, startNginx, type Nginx } from './nginx.ts';
import { SHIPPED_ENV } from './nodes.ts';

// The API mounted under a path behind the shipped nginx config (its `location /` moved to
// `location /data/`, the prefix stripped by `proxy_pass http://fire_api/`), the node told where
// readers reach it by PUBLIC_URL. The node sees Host 127.0.0.1:<nginx port> and paths without
// /data: only PUBLIC_URL can make its links right. Every link is followed through nginx, GDAL's
// OAPIF driver walks the items by their next links, and the explorer runs in Chromium.
const NGINX = nginx();
const GDAL = gdal();
const CHROMIUM = chromium();
const run = promisify(execFile);
const PREFIX = '/data';
const ROWS = 120;
/** Below the day's rows: the explorer offers the walk (`fire-api extract`, the OGC URL). */
const ROW_LIMIT = 100;

let node: TestServer | undefined;
let proxy: Nginx | undefined;
let base = '';

function replaceOnce(text: string, from: string, to: string): string {
  if (text.split(from).length !== 2) throw new Error(`the shipped nginx config no longer holds exactly one "${from}": update the test`);
  return text.replace(from, to);
}

beforeAll(async () => {
  if (!NGINX.path) return;
  const dataDir = await writeSampleData();
  await writeBulkHotspots(path.join(dataDir, 'hotspots/date=2025-08-05/a.parquet'), '2025-08-05', ROWS, 4);
  proxy = await startNginx(NGINX.path, async (port, accessLog) => {
    base = `http://127.0.0.1:${port}${PREFIX}`;
    node = await startServer(dataDir, { PUBLIC_URL: `${base}/`, TRUST_PROXY: 'true', ROW_LIMIT: String(ROW_LIMIT) });
    const address = new URL(node.url).host;
    const shipped = await shippedConfig([address, address], port, accessLog);
    return replaceOnce(replaceOnce(shipped, 'location / {', `location ${PREFIX}/ {`), 'proxy_pass http://fire_api;', 'proxy_pass http://fire_api/;');
  });
}, 60_000);
afterAll(async () => {
  await proxy?.stop();
  await node?.close();
});

const ready = (ctx: { skip: (note?: string) => never }) => {
  needService(ctx, NGINX);
  if (!node || !proxy) throw new Error('the node or nginx did not start');
  return node;
};

/** Through nginx, with the key. */
const viaProxy = (url: string, n: TestServer) => fetch(url, { headers: n.auth });

/** Every href of a JSON document, at any depth. */
const jsonHrefs = (value: unknown): string[] =>
  Array.isArray(value) ? value.flatMap(jsonHrefs) : value && typeof value === 'object' ? Object.entries(value).flatMap(([k, v]) => (k === 'href' && typeof v === 'string' ? [v] : jsonHrefs(v))) : [];

describe('behind nginx under /data with PUBLIC_URL', () => {
  it('every link of the OGC documents, items and Link headers is under the public URL, and each answers through nginx', async (ctx) => {
    const n = ready(ctx);
    const seen = new Set<string>();
    const queue = [`${base}/api/v1/ogc`];
    // Bounded: the documents link each other, and items pages link their next page.
    while (queue.length > 0 && seen.size < 80) {
      const url = queue.shift()!;
      if (seen.has(url)) continue;
      seen.add(url);
      expect(url.startsWith(`${base}/api/v1/`), url).toBe(true);
      const res = await viaProxy(url, n);
      expect(res.status, url).toBe(200);
      const type = res.headers.get('content-type') ?? '';
      const links = linkHeaderTargets(res.headers.get('link') ?? undefined);
      if (type.includes('json')) links.push(...jsonHrefs(await res.json()));
      else if (type.startsWith('text/html')) links.push(...pageLinks(await res.text()).links);
      else await res.arrayBuffer();
      for (const l of links) {
        expect(l.startsWith(`${base}/api/v1/`), `${url} links ${l}`).toBe(true);
        queue.push(l);
      }
    }
    expect(seen.size).toBeGreaterThan(30);
  });

  it("the explorer's page: its links, files and the base its scripts build the API's URLs on", async (ctx) => {
    const n = ready(ctx);
    const res = await viaProxy(`${base}/api/v1/explore`, n);
    expect(res.status).toBe(200);
    const page = pageLinks(await res.text());
    expect(page.base).toBe(base);
    for (const l of page.links) {
      expect(l.startsWith(`${base}/api/v1/`), l).toBe(true);
      expect((await viaProxy(l, n)).status, l).toBe(200);
    }
  });

  it('the explorer in Chromium through nginx: every request under the public URL, the count, and the walk commands under it', { timeout: 120_000 }, async (ctx) => {
    const n = ready(ctx);
    const executablePath = needService(ctx, CHROMIUM);
    await withBrowser(executablePath, async (open) => {
      const { tab, requests } = await open();
      await openView(tab, exploreUrl(base, { dataset: 'hotspots', from: '2025-08-05T00:00:00', to: '2025-08-06T00:00:00' }), n.key);
      await settled(tab);
      expect(await shownCount(tab)).toBe(ROWS);
      expect(await tab.textContent('#extract-command')).toContain(`--base-url '${base}' `);
      expect((await tab.textContent('#ogc-url'))!.startsWith(`${base}/api/v1/ogc/collections/hotspots/items?`)).toBe(true);
      expect(requests.length).toBeGreaterThan(5);
      expect(requests.filter((u) => !u.startsWith(`${base}/api/v1/`))).toEqual([]);
    });
  });

  it("the OpenAPI document's server is the public URL, and its paths answer there", async (ctx) => {
    const n = ready(ctx);
    const doc = (await (await viaProxy(`${base}/api/v1/docs`, n)).json()) as { servers: { url: string }[] };
    expect(doc.servers).toEqual([{ url: base }]);
    expect((await viaProxy(`${doc.servers[0]!.url}/api/v1/hotspots?from=2025-08-05&to=2025-08-06&format=csv`, n)).status).toBe(200);
  });

  it("GDAL's OAPIF driver reads every hotspot through nginx, ten a page by the next links", async (ctx) => {
    const n = ready(ctx);
    needService(ctx, GDAL);
    const env = { ...process.env, GDAL_HTTP_HEADERS: `Authorization: Bearer ${n.key}`, CPL_DEBUG: 'OFF' };
    const { stdout } = await run(path.join(path.dirname(GDAL.path!), 'ogrinfo'), ['-ro', '-q', '-oo', 'PAGE_SIZE=10', `OAPIF:${base}/api/v1/ogc`, 'hotspots'], { env, maxBuffer: 64 << 20 });
    // The bulk day and the sample data's four hotspots.
    expect((stdout.match(/^OGRFeature\(/gm) ?? []).length).toBe(ROWS + 4);
    // Every page came through nginx under the prefix: more than ROWS / 10 items requests in its log.
    const log = await readFile(proxy!.accessLog, 'utf8');
    expect(log.match(/GET \/data\/api\/v1\/ogc\/collections\/hotspots\/items /g)!.length).toBeGreaterThan(ROWS / 10);
  }, 60_000);
});

describe('the shipped files agree', () => {
  it("the environment file's PUBLIC_URL is a valid base naming nginx's server_name", async () => {
    const env = await readFile(SHIPPED_ENV, 'utf8');
    const publicUrl = /^PUBLIC_URL=(.*)$/m.exec(env)?.[1];
    expect(publicUrl).toBeDefined();
    const serverName = /^\s*server_name\s+([^;\s]+);/m.exec(await readFile(SHIPPED_CONF, 'utf8'))?.[1];
    expect(new URL(publicUrl!).host).toBe(serverName);
    expect(loadConfig({ PUBLIC_URL: publicUrl }).publicUrl).toBe(`https://${serverName}`);
  });
});

