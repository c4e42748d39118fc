import { TEMP_BUDGET_MB, type CapacityMeasured } from './capacity.ts';
import type { LoadRun } from './load-run.ts';
import type { OverloadResult } from './overload.ts';
import type { SlowReadersResult } from './slow-readers.ts';
import { atLeast, atMost, forRow, info, mustHold, type Figure } from './table.ts';
import type { ThrottledYearResult } from './throttled-year.ts';

/** Issue #11's targets for its bench section: (a) is I, (b) is J, (c) is K. */
export const CAPACITY_TARGETS = {
  I: { minRequestsRatio: 0.8, maxP99Ratio: 2, maxPeakRssMb: 400 },
  J: { minGoodputRatio: 0.8, maxRssGrowth: 1.1 },
} as const;

const PEAK_RSS = 'server peak RSS (VmRSS, 50 ms samples)';

function runFigures(id: string, label: string, r: LoadRun): Figure[] {
  return [
    info(id, `${label}: 200s per second`, r.goodput, 'req/s'),
    info(id, `${label}: latency p99 of the 200s`, r.okP99Ms, 'ms'),
    info(id, `${label}: answers other than 200, connection errors and timeouts`, r.refused + Object.values(r.otherStatuses).reduce((a, b) => a + b, 0) + r.errors),
  ];
}

export function slowReadersFigures(r: SlowReadersResult): Figure[] {
  return [
    info('I', 'throttled one-year CSV downloads, pace each', r.bytesPerSecond / 1000, 'kB/s'),
    ...runFigures('I', `without downloads, ${r.unloaded.connections} connections`, r.unloaded),
    ...runFigures('I', 'with the downloads in flight', r.loaded),
    forRow(10, atLeast('I', 'small windows: req/s with ÷ without the downloads', r.requestsRatio, CAPACITY_TARGETS.I.minRequestsRatio)),
    forRow(10, atMost('I', 'small windows: p99 with ÷ without the downloads', r.p99Ratio, CAPACITY_TARGETS.I.maxP99Ratio)),
    forRow(10, atMost('I', PEAK_RSS, r.peakRssMb, CAPACITY_TARGETS.I.maxPeakRssMb, 'MB')),
    forRow(10, atMost('I', 'TEMP_DIR peak (250 ms walks; TEMP_DIR_MAX_MB given)', r.tempPeakMb, TEMP_BUDGET_MB, 'MB')),
    info('I', 'downloads answered (headers) before the measurement', r.downloadsStarted),
    info('I', 'downloads mean pace reached', r.downloadMbPerSecond * 1000, 'kB/s'),
    mustHold('I', 'every download still open when the measurement ended', r.downloadsInFlight === r.downloads),
  ];
}

const retryText = (r: LoadRun) => (r.retryAfter ? `${r.retryAfter.min} / ${r.retryAfter.median} / ${r.retryAfter.max}` : 'none');

export function overloadFigures(r: OverloadResult): Figure[] {
  return [
    ...r.calibration.map((c) => info('J', `${c.connections} connections, ${c.seconds} s: 200s per second (p99 ${Math.round(c.okP99Ms)} ms)`, c.goodput, 'req/s')),
    info('J', 'offered: connections (10 × the best)', r.overload.connections),
    info('J', 'overload: 200s per second', r.overload.goodput, 'req/s'),
    forRow(11, atLeast('J', 'goodput at 10× ÷ goodput at the best concurrency', r.goodputRatio, CAPACITY_TARGETS.J.minGoodputRatio)),
    forRow(11, info('J', 'latency p99 of the admitted (200) requests', r.overload.okP99Ms, 'ms')),
    info('J', 'latency p99 at the best concurrency', r.best.okP99Ms, 'ms'),
    info('J', 'refused (503)', r.overload.refused),
    info('J', 'latency p99 of the refusals', r.overload.refusedP99Ms, 'ms'),
    info('J', `Retry-After of the refusals, min / median / max: ${retryText(r.overload)}`, r.overload.retryAfter?.median ?? Number.NaN, 's'),
    info('J', 'RSS idle at start', r.idleRssMb, 'MB'),
    info('J', 'RSS settled before the overload (after the calibration)', r.rssBeforeMb, 'MB'),
    info('J', PEAK_RSS, r.peakRssMb, 'MB'),
    info('J', 'RSS settled after the overload', r.rssAfterMb, 'MB'),
    forRow(11, atMost('J', 'RSS after ÷ before the overload', r.rssGrowth, CAPACITY_TARGETS.J.maxRssGrowth)),
    mustHold('J', 'every answer a 200 or a 503 (no 429, no 5xx other than 503)', Object.keys(r.overload.otherStatuses).length === 0),
  ];
}

export function throttledYearFigures(r: ThrottledYearResult): Figure[] {
  return [
    info('K', "server's QUERY_TIMEOUT_MS", r.queryTimeoutMs, 'ms'),
    info('K', 'pace of the client', r.bytesPerSecond / 1e6, 'MB/s'),
    info('K', 'wall time ÷ QUERY_TIMEOUT_MS', r.timeoutMultiple),
    info('K', 'rows received', r.rows),
    forRow(12, mustHold('K', 'status 200, every row, transfer ended cleanly', r.complete && r.rowsMatch)),
  ];
}

export function capacityFigures(m: CapacityMeasured): Figure[] {
  return [...(m.I ? slowReadersFigures(m.I) : []), ...(m.J ? overloadFigures(m.J) : []), ...(m.K ? throttledYearFigures(m.K) : [])];
}

/** Broken rather than short: a clean end with rows missing, or statuses the load should never cause. */
export function capacityProblems(m: CapacityMeasured): string[] {
  const problems: string[] = [];
  if (m.K && m.K.complete && !m.K.rowsMatch) problems.push(`K: a clean 200 with ${m.K.rows} rows, X-Returned ${m.K.returnedHeader}, DuckDB count ${m.K.expectedRows}`);
  if (m.J && Object.keys(m.J.overload.otherStatuses).length > 0) problems.push(`J: statuses other than 200 and 503: ${JSON.stringify(m.J.overload.otherStatuses)}`);
  return problems;
}
