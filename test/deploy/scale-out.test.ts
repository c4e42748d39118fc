import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBulkHotspotDays } from '../helpers/sample-data.ts';
import { needService, nginx, redisServer } from '../helpers/services.ts';
import { curlGet, extract, fetchGet, type ExtractRun, type Outcome } from './clients.ts';
import { Cluster } from './cluster.ts';
import { defaultsConfig, shippedConfig, startNginx, type Nginx } from './nginx.ts';
import { killRound, strikeAt, type Proxy, type Setup } from './rounds.ts';
import { ResponseTap } from './tap.ts';

// docs/scale-out.md, tried: two nodes as the shipped unit starts them, one Redis, nginx with the
// shipped config, and the same with nginx's defaults. 10 days of 20,000 hotspots; a page is up to
// 100,000 rows (13 MB of CSV), so the walk below is three pages. Pages this long leave the node
// still writing when the client is a few MB in, whatever the kernel buffers on the way.
const NGINX = nginx();
const REDIS = redisServer();
const ROW_LIMIT = 100_000;
const RATE_LIMIT = 12;
const AUTH_FAILURES = 4;
const GRACE_MS = 3000;
const WALK = { from: '2025-08-01', to: '2025-08-11' };
const PAGE = `/api/v1/hotspots?from=${WALK.from}&to=${WALK.to}&format=csv`;
const SMALL = '/api/v1/hotspots?from=2025-08-01T00:00&to=2025-08-01T00:01&format=csv';

let cluster: Cluster | undefined;
beforeAll(async () => {
  // Without a program the tests skip (or fail in CI) on their own; nothing to start here.
  if (!NGINX.path || !REDIS.path) return;
  const dataDir = await writeBulkHotspotDays(10);
  const env = { ROW_LIMIT: String(ROW_LIMIT), RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT), AUTH_FAILURES_PER_MINUTE: String(AUTH_FAILURES), WARM_FILE_CHECKS: 'false', SHUTDOWN_GRACE_MS: String(GRACE_MS) };
  cluster = await Cluster.start(REDIS.path, dataDir, env, 40);
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

/** nginx with the given site config over both nodes, and a tap in front of it. */
function proxy(config: 'shipped' | 'defaults') {
  const state: { proxy?: Proxy } = {};
  beforeAll(async () => {
    if (!cluster) return;
    const nodes = cluster.addresses;
    const site = (port: number, log: string) => (config === 'shipped' ? shippedConfig(nodes, port, log) : defaultsConfig(nodes, port, log));
    const started = await startNginx(NGINX.path!, site);
    const tap = new ResponseTap(new URL(started.url));
    state.proxy = { nginx: started, tap, url: await tap.start() };
  });
  afterAll(async () => {
    await state.proxy?.tap.stop();
    await state.proxy?.nginx.stop();
  });
  return (ctx: { skip: (note?: string) => never }): Setup => {
    needService(ctx, NGINX);
    needService(ctx, REDIS);
    if (!cluster || !state.proxy) throw new Error('the nodes or nginx did not start');
    return { cluster, proxy: state.proxy };
  };
}

/** The contract through any proxy: a 200 holds every row X-Returned promised, or it is a broken transfer. */
function expectBrokenTransfer(o: Outcome): void {
  expect(o.status).toBe(200);
  // A page is cut on a time boundary: up to ROW_LIMIT rows.
  expect(o.promised).toBeGreaterThan(ROW_LIMIT - 10);
  expect(o.rows, 'the kill landed after the last row').toBeLessThan(o.promised!);
  expect(o.clean, `${o.client} saw a clean 200 with ${o.rows} of the ${o.promised} rows X-Returned promised (${o.detail})`).toBe(false);
  // curl's "partial file": the connection closed before the response was complete.
  if (o.client === 'curl') expect(o.detail).toBe('curl exit 18');
}

let reference: ExtractRun | undefined;

function expectSameExtract(run: ExtractRun, cut = true): void {
  expect(run.code, run.stderr).toBe(0);
  if (cut) expect(run.stderr, 'the extract saw no cut to retry').toMatch(/retry 1\//);
  expect(run.sha256).toBe(reference!.sha256);
  expect(run.manifestSha256).toBe(reference!.sha256);
}

type Client = 'curl' | 'fetch' | 'fetch-gzip' | 'extract';
/**
 * Eleven kills at offsets spread over a page and over the walk (its second page starts near 13 MB).
 * Extract rounds are kept apart: nginx leaves a node that refused its retry alone for 10 s
 * (fail_timeout), and with the other node killed too it would have none to send the retry to.
 */
// fetch-gzip: the page gzip-coded (about a fifth of its size), cut a third of the way in.
const SHIPPED_ROUNDS: [Client, number][] = [['extract', 2_000_000], ['curl', 400_000], ['fetch', 1_500_000], ['curl', 3_000_000], ['fetch-gzip', 800_000], ['fetch', 2_500_000], ['curl', 6_000_000], ['extract', 15_000_000]];
// Behind HTTP/1.0 the node spools the page and then sends it whole at loopback speed: kills come early
// in the page, so more of it is left than the socket buffers between node and tap can take.
const DEFAULTS_ROUNDS: [Client, number][] = [['curl', 1_000_000], ['fetch', 2_000_000], ['extract', 1_500_000]];
const ROUND_TITLE = '%s, the serving node killed %i bytes in: a broken transfer (never a clean short 200), or for extract the undisturbed SHA-256';

async function round(setup: Setup, client: Client, offset: number): Promise<void> {
  const key = setup.cluster.takeKey();
  const url = `${setup.proxy.url}${PAGE}`;
  if (client === 'extract') expect(reference, 'the reference walk did not run').toBeDefined();
  // A node that had written its whole page into the socket buffers before the kill tested no cut: its
  // client must then have the whole answer, and the round is tried again with the kill earlier in the page.
  for (const at of [offset, offset / 2, offset / 4]) {
    if (client === 'extract') {
      const { result, cut } = await killRound(setup, at, () => extract(setup.proxy.url, key, WALK));
      expectSameExtract(result, cut);
      if (cut) return;
    } else {
      const { result, cut } = await killRound(setup, at, () => (client === 'curl' ? curlGet(url, key) : fetchGet(url, key, client === 'fetch' ? 'identity' : 'gzip')));
      if (cut) return expectBrokenTransfer(result);
      expect([result.status, result.clean, result.rows], `${client}: the node finished before the kill, yet the answer was not whole`).toEqual([200, true, result.promised]);
    }
  }
  expect.fail(`${client}: the serving node had finished its response before each kill (at ${offset}, ${offset / 2} and ${offset / 4} bytes)`);
}

describe('behind the shipped nginx config (deploy/nginx/fire-api.conf)', () => {
  const setup = proxy('shipped');

  it('one rate limit per key across both nodes: requests spread over both, then a 429', async (ctx) => {
    const { cluster, proxy } = setup(ctx);
    const key = cluster.takeKey();
    const before = cluster.nodes.map((n) => n.dataRequests());
    const statuses: number[] = [];
    for (let i = 0; i <= RATE_LIMIT; i++) statuses.push((await curlGet(`${proxy.url}${SMALL}`, key)).status);
    expect(statuses).toEqual([...Array(RATE_LIMIT).fill(200), 429]);
    const served = cluster.nodes.map((n, i) => n.dataRequests() - before[i]!);
    expect(Math.min(...served), `requests per node: ${served.join(', ')}`).toBeGreaterThanOrEqual(RATE_LIMIT / 4);
  });

  it('failed keys are limited per client address: a forged X-Forwarded-For does not escape it, another client is not blocked', async (ctx) => {
    const { proxy } = setup(ctx);
    const direct = proxy.nginx.url;
    const forged = (i: number) => ['-H', `X-Forwarded-For: 198.51.100.${i}`];
    const statuses: number[] = [];
    for (let i = 0; i <= AUTH_FAILURES; i++) statuses.push((await curlGet(`${direct}${SMALL}`, 'frk_notakey', forged(i))).status);
    expect(statuses).toEqual([...Array(AUTH_FAILURES).fill(401), 429]);
    // Another address on the loopback network is another client: nginx passes its address on.
    expect((await curlGet(`${direct}${SMALL}`, 'frk_notakey', ['--interface', '127.0.0.2'])).status).toBe(401);
  });

  it('fire-api extract, undisturbed: the reference walk', async (ctx) => {
    const { cluster, proxy } = setup(ctx);
    reference = await extract(proxy.url, cluster.takeKey(), WALK);
    expect(reference.code, reference.stderr).toBe(0);
    expect(reference.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it.for(SHIPPED_ROUNDS)(ROUND_TITLE, { timeout: 60_000 }, async ([client, offset], ctx) => {
    await round(setup(ctx), client, offset);
  });

  it('a rolling restart (SIGTERM, as systemctl sends it): the page under way completes, every request meanwhile gets a 200, the node exits 0 within SHUTDOWN_GRACE_MS', { timeout: 60_000 }, async (ctx) => {
    const { cluster, proxy } = setup(ctx);
    // The rounds before killed nodes: nginx leaves a failed node alone for fail_timeout (10 s), and
    // a drained node's refusals must find the other one back in the upstream group.
    await new Promise((r) => setTimeout(r, 10_500));
    const hit = strikeAt({ cluster, proxy }, 1_000_000, (node) => node.terminate());
    try {
      const page = await fetchGet(`${proxy.url}${PAGE}`, cluster.takeKey());
      const stop = hit.struck!;
      expect(stop, 'no node was serving the page').not.toBeNull();
      expect(page).toMatchObject({ status: 200, clean: true, rows: page.promised });
      let exited: { code: number | null; ms: number } | null = null;
      void stop.result.then((r) => (exited = { code: r.code, ms: Date.now() - stop.atMs }));
      // Past nginx's fail_timeout (10 s), when nginx tries the stopping node again on a kept-alive connection.
      const statuses: number[] = [];
      let key = cluster.takeKey();
      while (!exited && Date.now() - stop.atMs < 12_000) {
        if (statuses.length % 10 === 9) key = cluster.takeKey();
        statuses.push((await curlGet(`${proxy.url}${SMALL}`, key)).status);
        await new Promise((r) => setTimeout(r, 400));
      }
      expect(statuses.filter((status) => status !== 200), `statuses while ${stop.node.name} drained: ${statuses.join(' ')}`).toEqual([]);
      const end = exited as { code: number | null; ms: number } | null;
      expect(end, `${stop.node.name} still running 12 s after SIGTERM (SHUTDOWN_GRACE_MS ${GRACE_MS})`).not.toBeNull();
      expect(end!.code).toBe(0);
      expect(end!.ms).toBeLessThan(GRACE_MS + 2000);
    } finally {
      await hit.struck?.node.kill();
      await cluster.ensureRunning();
    }
  });

  it('no node answering: a problem+json 503 with Retry-After, not an nginx page', async (ctx) => {
    const { cluster, proxy } = setup(ctx);
    await Promise.all(cluster.nodes.map((n) => n.kill()));
    try {
      const r = await curlGet(`${proxy.nginx.url}${SMALL}`, cluster.takeKey());
      expect(r.status).toBe(503);
      expect(r.headers).toMatch(/^content-type: application\/problem\+json/im);
      expect(r.headers).toMatch(/^retry-after: 5/im);
      expect(JSON.parse(r.body.toString())).toMatchObject({ type: '/api/v1/docs#problem-unavailable', status: 503, code: 'unavailable' });
    } finally {
      await cluster.ensureRunning();
    }
  });
});

describe("behind nginx's defaults (HTTP/1.0 to the nodes), proxy_buffering off, proxy_next_upstream error timeout", () => {
  const setup = proxy('defaults');

  it.for(DEFAULTS_ROUNDS)(ROUND_TITLE, { timeout: 60_000 }, async ([client, offset], ctx) => {
    await round(setup(ctx), client, offset);
  });
});
