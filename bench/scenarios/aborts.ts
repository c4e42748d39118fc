import { fetchAndAbort, type AbortedRequest } from '../http/abort-request.ts';
import type { DayWindow } from '../lib/options.ts';
import { runPool } from '../lib/pool.ts';
import { randomInt, randomLogUniform, seededRandom } from '../lib/random.ts';
import { readStatusMb } from '../server/rss.ts';
import { readMetric, waitForMetricAtMost } from '../server/server-metrics.ts';
import type { ServerProcess } from '../server/server-process.ts';
import { bearer } from '../measure/session.ts';

const DAY_MS = 86_400_000;
const BUSY = 'fire_api_duckdb_connections_busy';
/** How long the connections get to come back after the last abort: "a few seconds". */
const BUSY_TIMEOUT_MS = 5_000;
/** How long the renderings queued by the aborted windows get to be done. */
const RENDER_TIMEOUT_MS = 300_000;
/** After the connections are back: let freed buffers and the last sockets go before RSS is read. */
const SETTLE_MS = 1_000;

export interface AbortsAsk {
  dataset: string;
  /** The data set's whole window; each request asks `windowDays` of it. */
  window: DayWindow;
  windowDays: number;
  count: number;
  warmupCount: number;
  concurrency: number;
  /** Abort points are log-uniform in [256 B, maxAbortBytes]: inside the first group and well past it. */
  maxAbortBytes: number;
  keys: readonly string[];
}

export interface AbortsResult {
  requests: number;
  warmupRequests: number;
  concurrency: number;
  windowDays: number;
  maxAbortBytes: number;
  wallSeconds: number;
  csv: number;
  geojson: number;
  abortedMidStream: number;
  /** The body was shorter than the drawn abort point: the request ran to its end. */
  endedBeforeAbort: number;
  /** The server cut the transfer itself: never expected here. */
  broken: number;
  non200: number;
  statusCounts: Record<string, number>;
  /** fire_api_streams_aborted_total over the measured batch: the server's own count of what it saw. */
  serverCountedAborts: number | null;
  busyAfter: number | null;
  busyWaitMs: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  /** RSS after ÷ before. */
  rssGrowth: number;
  /** Files still waiting to be rendered once the wait before reading RSS ended (the more of before and after; above 0: the wait timed out and RSS was not a quiet server's; NaN: not exported). */
  renderingsPendingAfter: number;
}

const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The `count` requests of one batch, drawn from `seed`: format, window start and abort point. */
function drawRequests(ask: AbortsAsk, count: number, seed: number) {
  const random = seededRandom(seed);
  const fromMs = Date.parse(`${ask.window.from}T00:00:00Z`);
  const days = Math.round((Date.parse(`${ask.window.to}T00:00:00Z`) - fromMs) / DAY_MS);
  const span = Math.min(ask.windowDays, days);
  return Array.from({ length: count }, () => {
    const startMs = fromMs + randomInt(random, 0, days - span + 1) * DAY_MS;
    const format = random() < 0.5 ? ('csv' as const) : ('geojson' as const);
    const path = `/api/v1/${ask.dataset}?from=${dayText(startMs)}&to=${dayText(startMs + span * DAY_MS)}${format === 'csv' ? '&format=csv' : ''}`;
    return { format, path, abortAfterBytes: randomLogUniform(random, 256, Math.max(256, ask.maxAbortBytes)) };
  });
}

async function runBatch(server: ServerProcess, ask: AbortsAsk, count: number, seed: number): Promise<{ format: string; run: AbortedRequest }[]> {
  const requests = drawRequests(ask, count, seed);
  return runPool(count, ask.concurrency, async (i) => {
    const r = requests[i]!;
    const run = await fetchAndAbort(server.baseUrl + r.path, bearer(ask.keys[i % ask.keys.length] ?? ''), r.abortAfterBytes);
    return { format: r.format, run };
  });
}

async function settledRssMb(server: ServerProcess): Promise<{ rssMb: number; busy: number | null; waitedMs: number; renderingsPending: number | null }> {
  const busy = await waitForMetricAtMost(server.baseUrl, BUSY, 0, BUSY_TIMEOUT_MS);
  // Nor rendering (RENDER_CACHE_MB): the aborted windows' files are rendered once their responses are over.
  const rendering = await waitForMetricAtMost(server.baseUrl, 'fire_api_renderings_pending', 0, RENDER_TIMEOUT_MS, 250);
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  return { rssMb: readStatusMb(server.pid, 'VmRSS') ?? Number.NaN, busy: busy.value, waitedMs: busy.waitedMs, renderingsPending: rendering.value };
}

/**
 * aborts: a warm-up batch, RSS once the server is quiet; then the measured batch of aborted
 * extracts, the busy-connection gauge until it reaches 0 (or the timeout), the files waiting to be
 * rendered too, RSS again.
 */
export async function runAborts(server: ServerProcess, ask: AbortsAsk): Promise<AbortsResult> {
  await runBatch(server, ask, ask.warmupCount, 2);
  const before = await settledRssMb(server);
  const abortedBefore = await readMetric(server.baseUrl, 'fire_api_streams_aborted_total');
  const started = performance.now();
  const runs = await runBatch(server, ask, ask.count, 1);
  const wallSeconds = (performance.now() - started) / 1000;
  const after = await settledRssMb(server);
  const abortedAfter = await readMetric(server.baseUrl, 'fire_api_streams_aborted_total');
  server.assertAlive();
  const statusCounts: Record<string, number> = {};
  for (const { run } of runs) statusCounts[run.status] = (statusCounts[run.status] ?? 0) + 1;
  const count = (outcome: AbortedRequest['outcome']) => runs.filter((r) => r.run.status === 200 && r.run.outcome === outcome).length;
  return {
    requests: runs.length,
    warmupRequests: ask.warmupCount,
    concurrency: ask.concurrency,
    windowDays: ask.windowDays,
    maxAbortBytes: ask.maxAbortBytes,
    wallSeconds,
    csv: runs.filter((r) => r.format === 'csv').length,
    geojson: runs.filter((r) => r.format === 'geojson').length,
    abortedMidStream: count('aborted'),
    endedBeforeAbort: count('ended'),
    broken: count('broken'),
    non200: runs.filter((r) => r.run.status !== 200).length,
    statusCounts,
    serverCountedAborts: abortedBefore === null || abortedAfter === null ? null : abortedAfter - abortedBefore,
    busyAfter: after.busy,
    busyWaitMs: after.waitedMs,
    rssBeforeMb: before.rssMb,
    rssAfterMb: after.rssMb,
    rssGrowth: after.rssMb / before.rssMb,
    renderingsPendingAfter: Math.max(before.renderingsPending ?? Number.NaN, after.renderingsPending ?? Number.NaN),
  };
}
