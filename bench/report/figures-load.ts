import type { AbortsResult } from '../scenarios/aborts.ts';
import type { ColdStartResult } from '../scenarios/cold-start.ts';
import type { ConcurrentResult } from '../scenarios/concurrent.ts';
import { TARGETS } from '../measure/figures.ts';
import type { GrowthResult } from '../scenarios/growth.ts';
import type { LoadMeasured } from './measure.ts';
import type { FloorResult } from '../scenarios/engine-floor.ts';
import type { SmallWindowsResult } from '../scenarios/small-windows.ts';
import { atLeast, atMost, headline, info, mustHold, type Figure } from '../measure/table.ts';

const PEAK_RSS = 'server peak RSS (VmRSS, 50 ms samples)';

export function concurrentFigures(r: ConcurrentResult): Figure[] {
  const s = 'concurrent-year-csv';
  const t = TARGETS[s];
  return [
    info(s, 'extracts started together', r.extracts),
    info(s, 'wall time, first request to last byte', r.wallSeconds, 's'),
    info(s, 'slowest single extract', Math.max(...r.extractSeconds), 's'),
    info(s, 'rows received, all extracts', r.rows),
    info(s, 'aggregate rows/s', r.rowsPerSecond, 'rows/s'),
    info(s, `single-extract rows/s (${r.baselineSource})`, r.baselineRowsPerSecond, 'rows/s'),
    headline(atLeast(s, 'aggregate rows/s ÷ single-extract rows/s', r.speedup, t.minSpeedup, '×')),
    headline(atMost(s, PEAK_RSS, r.peakRssMb, t.maxPeakRssMb, 'MB')),
    info(s, 'VmHWM at end (fresh server: warm-up, concurrent extracts)', r.vmHwmMb ?? Number.NaN, 'MB'),
    info(s, 'server CPU time (all threads)', r.serverCpuSeconds, 's'),
    info(s, 'most DuckDB connections busy (/metrics)', r.maxBusy),
    info(s, 'most requests queued for a connection (/metrics)', r.maxQueued),
    mustHold(s, 'each: rows = X-Returned = DuckDB count', r.rowsMatch),
    mustHold(s, 'each: status 200, transfer ended cleanly', r.complete),
  ];
}

export function coldStartFigures(r: ColdStartResult): Figure[] {
  const s = 'cold-first-byte';
  return [
    info(s, 'time to headers, fresh server, first request', r.headersMs, 'ms'),
    headline(info(s, 'time to first byte, fresh server, first request (informational)', r.firstByteMs, 'ms')),
    mustHold(s, 'status 200', r.status === 200),
  ];
}

/** `context`: the server's per-key limit and the data's mean density, which small-windows' figures are read against. */
export function smallWindowsFigures(r: SmallWindowsResult & { floor: FloorResult }, context: { rateLimitPerMinute: number; meanFeaturesPerHour: number }): Figure[] {
  const s = 'small-windows';
  const t = TARGETS[s];
  return [
    info(s, `connections, ${r.seconds} s after a ${r.warmupSeconds} s warm-up`, r.connections),
    info(s, 'keys (connection i uses key i mod keys)', r.keys),
    // The warm-up meets files not rendered yet (answered the old way while they are rendered); the
    // measured run starts once their renderings are done and the engine is quiet.
    info(s, `warm-up (${r.warmupSeconds} s, not measured): requests`, r.warmup.requests),
    info(s, 'warm-up: latency p50', r.warmup.latencyP50Ms, 'ms'),
    info(s, 'warm-up: latency p99', r.warmup.latencyP99Ms, 'ms'),
    info(s, 'warm-up: latency max', r.warmup.latencyMaxMs, 'ms'),
    info(s, `warm-up: ${PEAK_RSS}`, r.warmup.peakRssMb, 'MB'),
    info(s, 'after the warm-up, waited for its renderings and a quiet engine', r.warmup.settledAfterSeconds, 's'),
    atMost(s, 'renderings still pending when the measured run began (the wait timed out)', r.warmup.renderingsPendingAfter ?? Number.NaN, 0),
    mustHold(s, 'engine quiet when the measured run began (no connection busy for 0.5 s)', r.warmup.quiet),
    info(s, 'per-key limit RATE_LIMIT_PER_MINUTE (raised: 120/key cannot give 1,000 req/s)', context.rateLimitPerMinute, '/min'),
    info(s, 'mean features per 1-hour window in the data', context.meanFeaturesPerHour),
    info(s, 'requests completed', r.requests),
    // Hours repeat at random over 8,760 of them: the share answered from the rows cache says how much of the figure it made.
    info(s, 'answered from the rows cache (repeated hours)', r.cacheHits),
    info(s, 'written by DuckDB (first time asked)', r.cacheMisses),
    headline(atLeast(s, 'req/s (autocannon mean of 1 s samples)', r.requestsPerSecond, t.minRequestsPerSecond, 'req/s')),
    headline(atMost(s, 'latency p99', r.latencyP99Ms, t.maxP99Ms, 'ms')),
    info(s, 'latency p50', r.latencyP50Ms, 'ms'),
    info(s, 'latency max', r.latencyMaxMs, 'ms'),
    info(s, `engine floor: DuckDB in the bench, ${r.floor.connections} connections × ${r.floor.threads} thread(s), the same hours' whole ordered rows`, r.floor.queriesPerSecond, 'q/s'),
    info(s, 'engine floor: p99', r.floor.p99Ms, 'ms'),
    headline(atLeast(s, 'req/s ÷ engine floor q/s', r.requestsPerSecond / r.floor.queriesPerSecond, t.minFloorRatio)),
    headline(atMost(s, `latency p99 at ${r.connections} connections (issue #19's target)`, r.latencyP99Ms, t.maxP99MsVsFloor, 'ms')),
    info(s, `one client, one request at a time (${r.sequential.seconds} s, ${r.sequential.requests} requests): p50`, r.sequential.p50Ms, 'ms'),
    info(s, 'engine floor, one connection: p50', r.floor.sequentialP50Ms, 'ms'),
    headline(atMost(s, 'one client p50 ÷ engine floor one-connection p50', r.sequential.p50Ms / r.floor.sequentialP50Ms, t.maxSequentialRatio)),
    info(s, 'mean response size', r.meanResponseBytes / 1000, 'kB'),
    info(s, 'bytes received per second', r.bytesPerSecond / 1e6, 'MB/s'),
    info(s, 'server CPU time (all threads)', r.serverCpuSeconds, 's'),
    info(s, 'bench client CPU time (autocannon)', r.clientCpuSeconds, 's'),
    info(s, 'most DuckDB connections busy (/metrics)', r.maxBusy),
    info(s, 'most requests queued for a connection (/metrics)', r.maxQueued),
    info(s, PEAK_RSS, r.peakRssMb, 'MB'),
    atMost(s, 'non-2xx responses (a 429 means the key spreading failed)', r.non2xx, 0),
    atMost(s, 'connection errors and timeouts', r.errors + r.timeouts, 0),
  ];
}

export function growthFigures(r: GrowthResult): Figure[] {
  const s = 'window-sizes';
  return [
    ...r.windows.flatMap((w) => [
      info(s, `1 ${w.label}: rows`, w.rows),
      info(s, `1 ${w.label}: wall time (median of ${w.repeats})`, w.wallSeconds, 's'),
      headline(info(s, `1 ${w.label}: rows/s`, w.rowsPerSecond, 'rows/s')),
    ]),
    headline(atMost(s, 'fastest ÷ slowest rows/s (flat within 20 %)', r.spread, TARGETS[s].maxSpread)),
    mustHold(s, 'rows = X-Returned = DuckDB count', r.rowsMatch),
    mustHold(s, 'status 200, transfer ended cleanly', r.complete),
  ];
}

export function abortsFigures(r: AbortsResult): Figure[] {
  const s = 'aborts';
  const t = TARGETS[s];
  return [
    info(s, `aborted extracts (${r.csv} CSV, ${r.geojson} GeoJSON; ${r.concurrency} at a time; ${r.windowDays}-day windows)`, r.requests),
    info(s, 'warm-up aborts before RSS "before"', r.warmupRequests),
    info(s, 'wall time of the measured batch', r.wallSeconds, 's'),
    info(s, 'cut by the bench mid-body', r.abortedMidStream),
    info(s, 'ended before the abort point', r.endedBeforeAbort),
    info(s, 'server counted aborted streams (fire_api_streams_aborted_total)', r.serverCountedAborts ?? Number.NaN),
    headline(atMost(s, 'busy DuckDB connections after (/metrics)', r.busyAfter ?? Number.NaN, t.maxBusyAfter)),
    info(s, 'waited for busy connections to reach 0', r.busyWaitMs, 'ms'),
    info(s, 'server RSS before (after warm-up, settled)', r.rssBeforeMb, 'MB'),
    info(s, 'server RSS after (settled)', r.rssAfterMb, 'MB'),
    headline(atMost(s, 'RSS after ÷ before (growth; a drop is no leak)', r.rssGrowth, t.maxRssGrowth)),
    atMost(s, 'files still waiting to be rendered before RSS was read, before or after (the wait timed out)', r.renderingsPendingAfter, 0),
    mustHold(s, 'every status 200, no transfer cut by the server', r.non200 === 0 && r.broken === 0),
  ];
}

/** What makes the load scenarios broken rather than slow; the exit code is non-zero for these only. */
export function loadProblems(r: LoadMeasured): string[] {
  const problems: string[] = [];
  const { 'concurrent-year-csv': concurrent, 'cold-first-byte': cold, 'small-windows': small, 'window-sizes': sizes, aborts } = r;
  if (concurrent && !(concurrent.complete && concurrent.rowsMatch)) problems.push('concurrent-year-csv: an extract did not end cleanly or its rows did not match');
  if (cold && cold.status !== 200) problems.push(`cold-first-byte: status ${cold.status}`);
  if (small && (small.non2xx > 0 || small.errors > 0)) problems.push(`small-windows: statuses ${JSON.stringify(small.statusCounts)}, ${small.errors} errors`);
  if (sizes && !(sizes.complete && sizes.rowsMatch)) problems.push('window-sizes: an extract did not end cleanly or its rows did not match');
  if (aborts && (aborts.non200 > 0 || aborts.broken > 0)) problems.push(`aborts: statuses ${JSON.stringify(aborts.statusCounts)}, ${aborts.broken} transfers cut by the server`);
  if (aborts && aborts.busyAfter === null) problems.push('aborts: the server exports no fire_api_duckdb_connections_busy');
  return problems;
}
