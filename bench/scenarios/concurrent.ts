import { fetchExtract } from '../http/http-run.ts';
import { readCpuSeconds, readStatusMb, sampleRss } from '../server/rss.ts';
import { POOL_GAUGES, sampleMetrics } from '../server/server-metrics.ts';
import type { ServerProcess } from '../server/server-process.ts';

export interface ConcurrentResult {
  extracts: number;
  path: string;
  /** First request sent to last byte of the last response. */
  wallSeconds: number;
  /** Each extract's own wall time, in the order they were started. */
  extractSeconds: number[];
  rows: number;
  /** All rows of all extracts ÷ wallSeconds. */
  rowsPerSecond: number;
  /** The single-extract rows/s (year-csv's) this is compared with, and where it was measured. */
  baselineRowsPerSecond: number;
  baselineSource: string;
  /** rowsPerSecond ÷ baselineRowsPerSecond: ≥ 1 means running them together costs no throughput. */
  speedup: number;
  peakRssMb: number;
  rssSamples: number;
  vmHwmMb: number | null;
  serverCpuSeconds: number;
  /** Highest fire_api_duckdb_connections_busy and _requests_queued seen (250 ms polls). */
  maxBusy: number;
  maxQueued: number;
  complete: boolean;
  /** Every extract received exactly X-Returned = DuckDB's count rows. */
  rowsMatch: boolean;
}

/**
 * concurrent-year-csv: `count` one-year extracts started together from the bench, the server's RSS sampled
 * from /proc meanwhile. Aggregate throughput over the whole span, so a slow straggler counts.
 */
export async function runConcurrent(
  server: ServerProcess,
  ask: { path: string; expectedRows: number; count: number; baseline: { rowsPerSecond: number; source: string } },
): Promise<ConcurrentResult> {
  server.assertAlive();
  const cpuBefore = readCpuSeconds(server.pid) ?? Number.NaN;
  const sampler = sampleRss(server.pid);
  const pool = sampleMetrics(server.baseUrl, POOL_GAUGES);
  const started = performance.now();
  const runs = await Promise.all(
    Array.from({ length: ask.count }, () => fetchExtract(server.baseUrl + ask.path, 'csv', server.requestHeaders)),
  ).finally(() => (sampler.stop(), pool.stop()));
  const wallSeconds = (performance.now() - started) / 1000;
  const rss = sampler.stop();
  const gauges = pool.stop();
  server.assertAlive();
  const rows = runs.reduce((sum, r) => sum + r.rows, 0);
  const rowsPerSecond = rows / wallSeconds;
  return {
    extracts: ask.count,
    path: ask.path,
    wallSeconds,
    extractSeconds: runs.map((r) => r.wallMs / 1000),
    rows,
    rowsPerSecond,
    baselineRowsPerSecond: ask.baseline.rowsPerSecond,
    baselineSource: ask.baseline.source,
    speedup: rowsPerSecond / ask.baseline.rowsPerSecond,
    peakRssMb: rss.peakMb,
    rssSamples: rss.samples,
    vmHwmMb: readStatusMb(server.pid, 'VmHWM'),
    serverCpuSeconds: (readCpuSeconds(server.pid) ?? Number.NaN) - cpuBefore,
    maxBusy: gauges.fire_api_duckdb_connections_busy!,
    maxQueued: gauges.fire_api_duckdb_requests_queued!,
    complete: runs.every((r) => r.status === 200 && r.complete),
    rowsMatch: runs.every((r) => r.rows === r.returnedHeader && r.rows === ask.expectedRows),
  };
}
