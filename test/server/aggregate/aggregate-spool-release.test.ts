import type http from 'node:http';
import { readdirSync } from 'node:fs';
import { readdir, readlink } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARQUET } from '../../helpers/columnar.ts';
import { tempDir, writeChain } from '../../helpers/fixtures.ts';
import { stalledGet, waitFor } from '../../helpers/http.ts';
import { writeSpreadHotspots } from '../../helpers/parquet.ts';
import { CHAIN } from '../../helpers/sample-data.ts';
import { SPOOL, SPOOL_DAY_ROWS, SPOOL_DAYS, SPOOL_GROUPS } from '../../helpers/aggregate-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

// The spool's sizes and days (test/helpers/aggregate-data.ts): together past SPOOL_ROWS and SPOOL_GROUPS, the window's groups are spooled and read back from disk.
const [DAY_ROWS, DAYS] = [SPOOL_DAY_ROWS, SPOOL_DAYS];
const SHAPE = '&interval=day&groupBy=grid&cell=0.01&stats=frp.sum,frp.mean,scan.count';
const GRID = `/api/v1/hotspots/aggregate?from=2025-08-01&to=2025-08-04${SHAPE}`;
/**
 * Three more days of 5,000 rows, a group each: their GeoJSON, about 1.4 MB a part, turns the event
 * loop (every MB) while a part is read.
 */
const LARGE_DAYS = ['2025-09-01', '2025-09-02', '2025-09-03'];
const LARGE_GRID = `/api/v1/hotspots/aggregate?from=2025-09-01&to=2025-09-04${SHAPE}`;
/** July before them, a row a day: a season, its first part of the window all but empty. */
const JULY = Array.from({ length: 31 }, (_, i) => `2025-07-${String(i + 1).padStart(2, '0')}`);

let dir: string;
let server: TestServer;
beforeAll(async () => {
  dir = await tempDir();
  for (const day of DAYS) await writeSpreadHotspots(path.join(dir, `hotspots/date=${day}/a.parquet`), day, DAY_ROWS);
  for (const day of JULY) await writeSpreadHotspots(path.join(dir, `hotspots/date=${day}/a.parquet`), day, 1);
  for (const day of LARGE_DAYS) await writeSpreadHotspots(path.join(dir, `hotspots/date=${day}/a.parquet`), day, 5000);
  await writeChain(dir, 'hotspots', CHAIN);
  // Without the aggregate cache: each request computes and spools its answer.
  server = await startServer(dir, { ...SPOOL, RESPONSE_CACHE_MB: '0', AGGREGATE_CACHE_MB: '0' });
}, 120_000);
afterAll(async () => {
  await server?.close();
});

/** Spool files in this process's TEMP_DIR folder, and those it still holds open (a file is read after it has left the folder). */
async function openSpools(): Promise<string[]> {
  const folder = (await readdir(path.join(dir, '.tmp'))).filter((f) => f.startsWith(`extracts-${process.pid}`));
  const listed = (await Promise.all(folder.map((f) => readdir(path.join(dir, '.tmp', f))))).flat().filter((f) => f.includes('-part'));
  const held = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return [...listed, ...held.filter((target) => target.includes(dir) && target.includes('-part'))];
}

/** Waits until no spool file is left and the server's temp budget holds nothing; what is left otherwise. */
async function settled(s: TestServer): Promise<{ files: string[]; usedBytes: number }> {
  let files: string[] = ['?'];
  await waitFor(() => (void openSpools().then((f) => (files = f)), files.length === 0 && s.context.extract.tempBudget.usedBytes === 0), 15_000);
  return { files, usedBytes: s.context.extract.tempBudget.usedBytes };
}

/** The whole answer to an HTTP/1.0 GET, as text. */
function http10(s: TestServer, url: string): Promise<string> {
  const { hostname, port } = new URL(s.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      const headers = Object.entries(s.auth).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      socket.write(`GET ${url} HTTP/1.0\r\nhost: ${hostname}\r\n${headers}\r\n`);
    });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
  });
}

describe('spooled groups never read', () => {
  it('go with their temp space once a HEAD with a content coding (whose body is never written) is answered', async () => {
    expect(DAYS.length * DAY_ROWS).toBeGreaterThan(SPOOL_GROUPS);
    const r = await server.get(GRID, { method: 'HEAD', headers: { 'accept-encoding': 'gzip' } });
    expect([r.status, r.headers.get('content-encoding'), Number(r.headers.get('x-returned'))]).toEqual([200, 'gzip', DAYS.length * DAY_ROWS]);
    expect(await settled(server)).toEqual({ files: [], usedBytes: 0 });
  }, 60_000);

  it('are counted for a HEAD without a content coding as they are read, the event loop turning: the length of the GET\'s body', async () => {
    const folders = () => readdirSync(path.join(dir, '.tmp')).filter((f) => f.startsWith(`extracts-${process.pid}`));
    const parts = () => folders().flatMap((f) => readdirSync(path.join(dir, '.tmp', f))).filter((f) => f.endsWith('-part')).length;
    // Parts only come until the read begins, then leave the folder one by one as each is opened: fewer seen, but some, is mid-read.
    let [most, midRead, polling] = [0, false, true];
    const poll = () => {
      const n = parts();
      if (n > 0 && n < most) midRead = true;
      most = Math.max(most, n);
      if (polling) setImmediate(poll);
    };
    poll();
    const identity = { 'accept-encoding': 'identity' };
    const head = await server.get(LARGE_GRID, { method: 'HEAD', headers: identity }).finally(() => (polling = false));
    const get = await server.get(LARGE_GRID, { headers: identity });
    expect([head.status, most >= 2, midRead]).toEqual([200, true, true]);
    expect(Number(head.headers.get('content-length'))).toBe((await get.arrayBuffer()).byteLength);
    expect(await settled(server)).toEqual({ files: [], usedBytes: 0 });
  }, 60_000);

  it('go with their temp space when the Parquet file, or the HTTP/1.0 body, cannot be written after them (503)', async () => {
    // Room for the spool, which takes it all as it grows in steps, none left for the Parquet file written from it.
    const small = await startServer(dir, { ...SPOOL, RESPONSE_CACHE_MB: '0', AGGREGATE_CACHE_MB: '0', TEMP_DIR_MAX_MB: '12' });
    try {
      const csv = await small.get(`${GRID}&format=csv`);
      expect([csv.status, Number(csv.headers.get('x-returned'))]).toEqual([200, DAYS.length * DAY_ROWS]);
      await csv.arrayBuffer();
      expect(await settled(small)).toEqual({ files: [], usedBytes: 0 });
      const r = await small.get(GRID, { headers: { accept: PARQUET } });
      expect([r.status, r.headers.get('content-type')]).toEqual([503, expect.stringMatching(/^application\/problem\+json/)]);
      await r.arrayBuffer();
      expect(await settled(small)).toEqual({ files: [], usedBytes: 0 });
      // An HTTP/1.0 body is written whole to TEMP_DIR before it is sent: no room for it either.
      expect((await http10(small, `${GRID}&format=csv`)).split('\r\n')[0]).toBe('HTTP/1.1 503 Service Unavailable');
      expect(await settled(small)).toEqual({ files: [], usedBytes: 0 });
    } finally {
      await small.close();
    }
  }, 90_000);
});

/** Starts a GET whose client reads nothing, and tells when the headers came. */
function stalled(s: TestServer, url: string): { request: http.ClientRequest; answered: () => http.IncomingMessage | undefined } {
  let received: http.IncomingMessage | undefined;
  const request = stalledGet(`${s.url}${url}`, s.auth, (res) => (received = res));
  return { request, answered: () => received };
}

describe('spooled groups', () => {
  it('are spooled for a season whose first part is all but empty, as the files\' row counts tell', async () => {
    const url = `/api/v1/hotspots/aggregate?from=2025-07-01&to=2025-08-04${SHAPE}&format=csv`;
    // Held by DuckDB, the groups would take no temp space: a budget (10 KB) no spool of them fits in refuses them only if spooled.
    const tiny = await startServer(dir, { ...SPOOL, RESPONSE_CACHE_MB: '0', AGGREGATE_CACHE_MB: '0', TEMP_DIR_MAX_MB: '0.01' });
    try {
      const [answered, refused] = await Promise.all([server.get(url), tiny.get(url)]);
      expect([answered.status, answered.headers.get('x-returned'), refused.status]).toEqual([200, String(JULY.length + DAYS.length * DAY_ROWS), 503]);
      await Promise.all([answered.arrayBuffer(), refused.arrayBuffer()]);
      expect(await settled(server)).toEqual({ files: [], usedBytes: 0 });
      expect(tiny.context.extract.tempBudget.usedBytes).toBe(0);
    } finally {
      await tiny.close();
    }
  }, 90_000);

  it('cut within AGGREGATE_SPOOL_GROUPS are read back into memory: the first day\'s answer, spooled first (a budget too small is a 503)', async () => {
    const cut = await startServer(dir, { ...SPOOL, RESPONSE_CACHE_MB: '0', AGGREGATE_ROW_LIMIT: String(DAY_ROWS + 1) });
    // 10 KB: less than one part's groups.
    const tiny = await startServer(dir, { ...SPOOL, RESPONSE_CACHE_MB: '0', AGGREGATE_ROW_LIMIT: String(DAY_ROWS + 1), TEMP_DIR_MAX_MB: '0.01' });
    try {
      expect(DAY_ROWS).toBeLessThanOrEqual(SPOOL_GROUPS);
      const [first, day] = await Promise.all([cut.get(`${GRID}&format=csv`), server.get(`/api/v1/hotspots/aggregate?from=2025-08-01&to=2025-08-02${SHAPE}&format=csv`)]);
      expect([first.headers.get('x-returned'), first.headers.get('x-truncated')]).toEqual([String(DAY_ROWS), 'true']);
      const rows = (body: string) => body.slice(body.indexOf('\n') + 1);
      expect(rows(await first.text())).toBe(rows(await day.text()));
      const refused = await tiny.get(`${GRID}&format=csv`);
      expect(refused.status).toBe(503);
      await refused.arrayBuffer();
      expect(await settled(cut)).toEqual({ files: [], usedBytes: 0 });
      expect(tiny.context.extract.tempBudget.usedBytes).toBe(0);
    } finally {
      await cut.close();
      await tiny.close();
    }
  }, 90_000);

  it('asked for twice at once are the same bytes, and leave no file and no temp space', async () => {
    const [a, b] = await Promise.all([server.get(`${GRID}&format=csv`), server.get(`${GRID}&format=csv`)]);
    const [x, y] = [Buffer.from(await a.arrayBuffer()), Buffer.from(await b.arrayBuffer())];
    expect([a.status, b.status, a.headers.get('x-returned')]).toEqual([200, 200, String(DAYS.length * DAY_ROWS)]);
    expect(x.equals(y)).toBe(true);
    expect(await settled(server)).toEqual({ files: [], usedBytes: 0 });
  }, 90_000);

  it('leave no file and no temp space when the client hangs up while they are being spooled, before the first byte; never an internal error', async () => {
    const budget = server.context.extract.tempBudget;
    const copying = () => readdirSync(path.join(dir, '.tmp')).filter((f) => f.startsWith(`extracts-${process.pid}`)).some((f) => readdirSync(path.join(dir, '.tmp', f)).some((p) => p.endsWith('-part.parquet')));
    let caught = 0;
    // Caught while a part is being written (on a machine fast enough to answer first, asked again), a little later each
    // time: a part that ends on another connection after the spool went is the client's doing, not an internal error.
    for (let attempt = 0; attempt < 16 && caught < 8; attempt++) {
      const { request, answered } = stalled(server, `${GRID}&format=csv`);
      await waitFor(() => (budget.usedBytes > 0 && copying()) || answered() !== undefined, 60_000);
      for (let turns = attempt % 4; turns > 0; turns--) await new Promise((r) => setTimeout(r, 5));
      if (answered() === undefined) caught++;
      request.destroy();
      expect(await settled(server)).toEqual({ files: [], usedBytes: 0 });
    }
    expect(caught).toBeGreaterThan(0);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^fire_api_internal_errors_total 0$/m);
  }, 180_000);
});
