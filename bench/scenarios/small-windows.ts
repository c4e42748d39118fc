import autocannon, { type Client, type Result } from 'autocannon';
import { bearer } from '../measure/session.ts';
import type { DayWindow } from '../lib/options.ts';
import { randomInt, seededRandom } from '../lib/random.ts';
import { readCpuSeconds, sampleRss } from '../server/rss.ts';
import { POOL_GAUGES, readMetrics, sampleMetrics, waitForMetricAtMost, waitForQuiet } from '../server/server-metrics.ts';

const CACHE_COUNTERS = ['fire_api_rows_cache_hits_total', 'fire_api_rows_cache_misses_total'];
import type { ServerProcess } from '../server/server-process.ts';

const HOUR_MS = 3_600_000;
const hourText = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');

export interface SmallWindowsAsk {
  dataset: string;
  /** Each request's hour is drawn from this window. */
  window: DayWindow;
  connections: number;
  seconds: number;
  /** Connection i sends keys[i mod keys.length]. */
  keys: readonly string[];
}

export interface SmallWindowsResult {
  connections: number;
  seconds: number;
  keys: number;
  /** Warm-up run (same load, not counted) seconds. */
  warmupSeconds: number;
  /**
   * The warm-up, printed apart: on a fresh server its hours' files are not rendered yet and are
   * answered the old way while they are being rendered. Then the bench waits for the renderings
   * and for a quiet engine, so the measured run does not start inside the warm-up's tail.
   */
  warmup: { requests: number; latencyP50Ms: number; latencyP99Ms: number; latencyMaxMs: number; peakRssMb: number; settledAfterSeconds: number; renderingsPendingAfter: number | null; quiet: boolean };
  requests: number;
  /** autocannon's mean of its one-second samples. */
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  bytesPerSecond: number;
  meanResponseBytes: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCounts: Record<string, number>;
  peakRssMb: number;
  serverCpuSeconds: number;
  clientCpuSeconds: number;
  /** Highest fire_api_duckdb_connections_busy and _requests_queued seen (250 ms polls). */
  maxBusy: number;
  maxQueued: number;
  /** Requests of the measured run answered from the server's rows cache (a repeated hour), and not. */
  cacheHits: number;
  cacheMisses: number;
  /** One client sending one request at a time, after the measured run. */
  sequential: { seconds: number; requests: number; p50Ms: number };
}

/** Start times (ms) of random hours of the window (seeded, so runs repeat); the engine floor draws the same hours. */
export function randomHours(window: DayWindow, seed: number): () => number {
  const random = seededRandom(seed);
  const fromMs = Date.parse(`${window.from}T00:00:00Z`);
  const hours = (Date.parse(`${window.to}T00:00:00Z`) - fromMs) / HOUR_MS;
  return () => fromMs + randomInt(random, 0, hours) * HOUR_MS;
}

/**
 * Every request a random hour of the window: the server cannot answer from one warm partition.
 * Every request goes through key, rate limit and preflight; an hour asked before may be answered
 * from the server's rows cache, and the figures count how many were.
 */
function hourPaths(ask: SmallWindowsAsk, seed: number): () => string {
  const nextHour = randomHours(ask.window, seed);
  return () => {
    const startMs = nextHour();
    return `/api/v1/${ask.dataset}?from=${hourText(startMs)}&to=${hourText(startMs + HOUR_MS)}`;
  };
}

/**
 * One autocannon run; each connection gets its own key through its own request list. `watch`
 * sees every client (its 'response' and 'headers' events), for figures autocannon does not keep.
 */
export function fire(server: ServerProcess, ask: SmallWindowsAsk, seconds: number, seed: number, watch?: (client: Client) => void): Promise<Result> {
  const nextPath = hourPaths(ask, seed);
  let connection = 0;
  const setupClient = (client: Client) => {
    const headers = bearer(ask.keys[connection++ % ask.keys.length] ?? '');
    client.setRequests([{ method: 'GET', setupRequest: (request) => ({ ...request, path: nextPath(), headers }) }]);
    watch?.(client);
  };
  return new Promise((resolve, reject) => {
    autocannon({ url: server.baseUrl, connections: ask.connections, duration: seconds, timeout: 30, setupClient }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/** One connection, one request at a time, for a quarter of the measured run: the latency a polling script sees. */
async function sequentialRun(server: ServerProcess, ask: SmallWindowsAsk): Promise<SmallWindowsResult['sequential']> {
  const seconds = Math.max(2, ask.seconds / 4);
  const result = await fire(server, { ...ask, connections: 1 }, seconds, 1);
  server.assertAlive();
  return { seconds, requests: result.requests.total, p50Ms: result.latency.p50 };
}

/** How long the bench waits after the warm-up for the files it asked to be rendered. */
const RENDER_WAIT_MS = 120_000;
/** How long it then waits for no connection to be busy for half a second. */
const QUIET_WAIT_MS = 30_000;

/**
 * After the warm-up: its files' renderings done (they are queued as each response ends and run
 * while no request uses DuckDB), then no connection busy for half a second. Without renderings
 * (RENDER_CACHE_MB=0) none is ever pending, and only the quiet engine is waited for.
 */
async function settle(server: ServerProcess): Promise<{ settledAfterSeconds: number; renderingsPendingAfter: number | null; quiet: boolean }> {
  const started = performance.now();
  const rendered = await waitForMetricAtMost(server.baseUrl, 'fire_api_renderings_pending', 0, RENDER_WAIT_MS, 100);
  const quiet = (await waitForQuiet(server.baseUrl, 500, QUIET_WAIT_MS)) < QUIET_WAIT_MS;
  return { settledAfterSeconds: (performance.now() - started) / 1000, renderingsPendingAfter: rendered.value, quiet };
}

/** small-windows: autocannon, in the bench's process, against 1-hour GeoJSON windows; a short unmeasured run first. */
export async function runSmallWindows(server: ServerProcess, ask: SmallWindowsAsk): Promise<SmallWindowsResult> {
  const warmupSeconds = ask.seconds / 10;
  const warmupSampler = sampleRss(server.pid);
  const warm = await fire(server, ask, warmupSeconds, 2).finally(() => warmupSampler.stop());
  server.assertAlive();
  const settled = await settle(server);
  const cacheBefore = await readMetrics(server.baseUrl, CACHE_COUNTERS);
  const cpuBefore = readCpuSeconds(server.pid) ?? Number.NaN;
  const clientBefore = process.cpuUsage();
  const sampler = sampleRss(server.pid);
  const pool = sampleMetrics(server.baseUrl, POOL_GAUGES);
  const result = await fire(server, ask, ask.seconds, 1).finally(() => (sampler.stop(), pool.stop()));
  const client = process.cpuUsage(clientBefore);
  const gauges = pool.stop();
  server.assertAlive();
  const cacheAfter = await readMetrics(server.baseUrl, CACHE_COUNTERS);
  const cacheDelta = (name: string) => (cacheAfter[name] ?? Number.NaN) - (cacheBefore[name] ?? Number.NaN);
  const statusCounts = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]));
  return {
    connections: ask.connections,
    seconds: ask.seconds,
    keys: Math.min(ask.keys.length, ask.connections),
    warmupSeconds,
    warmup: { requests: warm.requests.total, latencyP50Ms: warm.latency.p50, latencyP99Ms: warm.latency.p99, latencyMaxMs: warm.latency.max, peakRssMb: warmupSampler.stop().peakMb, ...settled },
    requests: result.requests.total,
    requestsPerSecond: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    latencyMaxMs: result.latency.max,
    bytesPerSecond: result.throughput.average,
    meanResponseBytes: result.requests.total > 0 ? result.throughput.total / result.requests.total : Number.NaN,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCounts,
    peakRssMb: sampler.stop().peakMb,
    serverCpuSeconds: (readCpuSeconds(server.pid) ?? Number.NaN) - cpuBefore,
    clientCpuSeconds: (client.user + client.system) / 1e6,
    maxBusy: gauges.fire_api_duckdb_connections_busy!,
    maxQueued: gauges.fire_api_duckdb_requests_queued!,
    cacheHits: cacheDelta('fire_api_rows_cache_hits_total'),
    cacheMisses: cacheDelta('fire_api_rows_cache_misses_total'),
    sequential: await sequentialRun(server, ask),
  };
}
