import type { AbortsResult } from './aborts.ts';
import type { ColdStartResult } from './cold-start.ts';
import type { ConcurrentResult } from './concurrent.ts';
import { TARGETS } from './figures.ts';
import type { GrowthResult } from './growth.ts';
import type { SmallWindowsResult } from './small-windows.ts';
import { atLeast, atMost, forRow, info, mustHold, type Figure } from './table.ts';

const PEAK_RSS = 'server peak RSS (VmRSS, 50 ms samples)';

export function concurrentFigures(d: ConcurrentResult): Figure[] {
  return [
    info('D', 'extracts started together', d.extracts),
    info('D', 'wall time, first request to last byte', d.wallSeconds, 's'),
    info('D', 'slowest single extract', Math.max(...d.extractSeconds), 's'),
    info('D', 'rows received, all extracts', d.rows),
    info('D', 'aggregate rows/s', d.rowsPerSecond, 'rows/s'),
    info('D', `row 1 single-extract rows/s (${d.baselineSource})`, d.baselineRowsPerSecond, 'rows/s'),
    forRow(4, atLeast('D', 'aggregate rows/s ÷ row 1 rows/s', d.speedup, TARGETS.D.minSpeedup, '×')),
    forRow(4, atMost('D', PEAK_RSS, d.peakRssMb, TARGETS.D.maxPeakRssMb, 'MB')),
    info('D', 'VmHWM at end (fresh server: warm-up, D)', d.vmHwmMb ?? Number.NaN, 'MB'),
    info('D', 'server CPU time (all threads)', d.serverCpuSeconds, 's'),
    info('D', 'most DuckDB connections busy (/metrics)', d.maxBusy),
    info('D', 'most requests queued for a connection (/metrics)', d.maxQueued),
    mustHold('D', 'each: rows = X-Returned = DuckDB count', d.rowsMatch),
    mustHold('D', 'each: status 200, transfer ended cleanly', d.complete),
  ];
}

export function coldStartFigures(e: ColdStartResult): Figure[] {
  return [
    info('E', 'time to headers, fresh server, first request', e.headersMs, 'ms'),
    forRow(5, info('E', 'time to first byte, fresh server, first request (informational)', e.firstByteMs, 'ms')),
    mustHold('E', 'status 200', e.status === 200),
  ];
}

/** `context`: the server's per-key limit and the data's mean density, which F's figures are read against. */
export function smallWindowsFigures(f: SmallWindowsResult, context: { rateLimitPerMinute: number; meanFeaturesPerHour: number }): Figure[] {
  return [
    info('F', `connections, ${f.seconds} s after a ${f.warmupSeconds} s warm-up`, f.connections),
    info('F', 'keys (connection i uses key i mod keys)', f.keys),
    info('F', 'per-key limit RATE_LIMIT_PER_MINUTE (raised: 120/key cannot give 1,000 req/s)', context.rateLimitPerMinute, '/min'),
    info('F', 'mean features per 1-hour window in the data', context.meanFeaturesPerHour),
    info('F', 'requests completed', f.requests),
    // Hours repeat at random over 8,760 of them: the share answered from the rows cache says how much of the figure it made.
    info('F', 'answered from the rows cache (repeated hours)', f.cacheHits),
    info('F', 'written by DuckDB (first time asked)', f.cacheMisses),
    forRow(6, atLeast('F', 'req/s (autocannon mean of 1 s samples)', f.requestsPerSecond, TARGETS.F.minRequestsPerSecond, 'req/s')),
    forRow(6, atMost('F', 'latency p99', f.latencyP99Ms, TARGETS.F.maxP99Ms, 'ms')),
    info('F', 'latency p50', f.latencyP50Ms, 'ms'),
    info('F', 'latency max', f.latencyMaxMs, 'ms'),
    info('F', 'mean response size', f.meanResponseBytes / 1000, 'kB'),
    info('F', 'bytes received per second', f.bytesPerSecond / 1e6, 'MB/s'),
    info('F', 'server CPU time (all threads)', f.serverCpuSeconds, 's'),
    info('F', 'bench client CPU time (autocannon)', f.clientCpuSeconds, 's'),
    info('F', 'most DuckDB connections busy (/metrics)', f.maxBusy),
    info('F', 'most requests queued for a connection (/metrics)', f.maxQueued),
    info('F', PEAK_RSS, f.peakRssMb, 'MB'),
    atMost('F', 'non-2xx responses (a 429 means the key spreading failed)', f.non2xx, 0),
    atMost('F', 'connection errors and timeouts', f.errors + f.timeouts, 0),
  ];
}

export function growthFigures(g: GrowthResult): Figure[] {
  return [
    ...g.windows.flatMap((w) => [
      info('G', `1 ${w.label}: rows`, w.rows),
      info('G', `1 ${w.label}: wall time (median of ${w.repeats})`, w.wallSeconds, 's'),
      forRow(7, info('G', `1 ${w.label}: rows/s`, w.rowsPerSecond, 'rows/s')),
    ]),
    forRow(7, atMost('G', 'fastest ÷ slowest rows/s (flat within 20 %)', g.spread, TARGETS.G.maxSpread)),
    mustHold('G', 'rows = X-Returned = DuckDB count', g.rowsMatch),
    mustHold('G', 'status 200, transfer ended cleanly', g.complete),
  ];
}

export function abortsFigures(h: AbortsResult): Figure[] {
  return [
    info('H', `aborted extracts (${h.csv} CSV, ${h.geojson} GeoJSON; ${h.concurrency} at a time; ${h.windowDays}-day windows)`, h.requests),
    info('H', 'warm-up aborts before RSS "before"', h.warmupRequests),
    info('H', 'wall time of the measured batch', h.wallSeconds, 's'),
    info('H', 'cut by the bench mid-body', h.abortedMidStream),
    info('H', 'ended before the abort point', h.endedBeforeAbort),
    info('H', 'server counted aborted streams (fire_api_streams_aborted_total)', h.serverCountedAborts ?? Number.NaN),
    forRow(8, atMost('H', 'busy DuckDB connections after (/metrics)', h.busyAfter ?? Number.NaN, TARGETS.H.maxBusyAfter)),
    info('H', 'waited for busy connections to reach 0', h.busyWaitMs, 'ms'),
    info('H', 'server RSS before (after warm-up, settled)', h.rssBeforeMb, 'MB'),
    info('H', 'server RSS after (settled)', h.rssAfterMb, 'MB'),
    forRow(8, atMost('H', 'RSS after ÷ before (growth; a drop is no leak)', h.rssGrowth, TARGETS.H.maxRssGrowth)),
    mustHold('H', 'every status 200, no transfer cut by the server', h.non200 === 0 && h.broken === 0),
  ];
}

/** What makes rows 4–8 broken rather than slow; the exit code is non-zero for these only. */
export function loadProblems(r: { D?: ConcurrentResult; E?: ColdStartResult; F?: SmallWindowsResult; G?: GrowthResult; H?: AbortsResult }): string[] {
  const problems: string[] = [];
  if (r.D && !(r.D.complete && r.D.rowsMatch)) problems.push('D: an extract did not end cleanly or its rows did not match');
  if (r.E && r.E.status !== 200) problems.push(`E: status ${r.E.status}`);
  if (r.F && (r.F.non2xx > 0 || r.F.errors > 0)) problems.push(`F: statuses ${JSON.stringify(r.F.statusCounts)}, ${r.F.errors} errors`);
  if (r.G && !(r.G.complete && r.G.rowsMatch)) problems.push('G: an extract did not end cleanly or its rows did not match');
  if (r.H && (r.H.non200 > 0 || r.H.broken > 0)) problems.push(`H: statuses ${JSON.stringify(r.H.statusCounts)}, ${r.H.broken} transfers cut by the server`);
  if (r.H && r.H.busyAfter === null) problems.push('H: the server exports no fire_api_duckdb_connections_busy');
  return problems;
}
