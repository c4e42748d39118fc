import { TEMP_BUDGET_MB, type CapacityMeasured } from '../scenarios/capacity.ts';
import type { LoadRun } from '../scenarios/load-run.ts';
import type { OverloadResult } from '../scenarios/overload.ts';
import type { SlowReadersResult } from '../scenarios/slow-readers.ts';
import { atLeast, atMost, headline, info, mustHold, type Figure } from '../measure/table.ts';
import type { ThrottledYearResult } from '../scenarios/throttled-year.ts';

/** Issue #11's targets for its bench section: (a) is slow-readers, (b) is overload, (c) is throttled-year. */
export const CAPACITY_TARGETS = {
  'slow-readers': { minRequestsRatio: 0.8, maxP99Ratio: 2, maxPeakRssMb: 400 },
  overload: { minGoodputRatio: 0.8, maxRssGrowth: 1.1 },
} as const;

const PEAK_RSS = 'server peak RSS (VmRSS, 50 ms samples)';

function runFigures(scenario: string, label: string, r: LoadRun): Figure[] {
  return [
    info(scenario, `${label}: 200s per second`, r.goodput, 'req/s'),
    info(scenario, `${label}: latency p99 of the 200s`, r.okP99Ms, 'ms'),
    info(scenario, `${label}: answers other than 200, connection errors and timeouts`, r.refused + Object.values(r.otherStatuses).reduce((a, b) => a + b, 0) + r.errors),
  ];
}

export function slowReadersFigures(r: SlowReadersResult): Figure[] {
  const s = 'slow-readers';
  const t = CAPACITY_TARGETS[s];
  return [
    info(s, 'throttled one-year CSV downloads, pace each', r.bytesPerSecond / 1000, 'kB/s'),
    ...runFigures(s, `without downloads, ${r.unloaded.connections} connections`, r.unloaded),
    ...runFigures(s, 'with the downloads in flight', r.loaded),
    headline(atLeast(s, 'small windows: req/s with ÷ without the downloads', r.requestsRatio, t.minRequestsRatio)),
    headline(atMost(s, 'small windows: p99 with ÷ without the downloads', r.p99Ratio, t.maxP99Ratio)),
    headline(atMost(s, PEAK_RSS, r.peakRssMb, t.maxPeakRssMb, 'MB')),
    headline(atMost(s, 'TEMP_DIR peak (250 ms walks; TEMP_DIR_MAX_MB given), renderings apart', r.tempPeakMb, TEMP_BUDGET_MB, 'MB')),
    info(s, 'renderings folder peak (RENDER_CACHE_MB, a budget of its own)', r.renderingsPeakMb, 'MB'),
    // The folder may pass its budget by renderings evicted while still being read (docs/configuration.md).
    info(s, 'renderings folder peak ÷ RENDER_CACHE_MB', r.renderingsBudgetMb > 0 ? r.renderingsPeakMb / r.renderingsBudgetMb : Number.NaN),
    info(s, 'downloads answered (headers) before the measurement', r.downloadsStarted),
    info(s, 'downloads mean pace reached', r.downloadMbPerSecond * 1000, 'kB/s'),
    mustHold(s, 'every download still open when the measurement ended', r.downloadsInFlight === r.downloads),
  ];
}

const retryText = (r: LoadRun) => (r.retryAfter ? `${r.retryAfter.min} / ${r.retryAfter.median} / ${r.retryAfter.max}` : 'none');

export function overloadFigures(r: OverloadResult): Figure[] {
  const s = 'overload';
  const t = CAPACITY_TARGETS[s];
  return [
    ...r.calibration.map((c) => info(s, `${c.connections} connections, ${c.seconds} s: 200s per second (p99 ${Math.round(c.okP99Ms)} ms)`, c.goodput, 'req/s')),
    info(s, 'offered: connections (10 × the best)', r.overload.connections),
    info(s, 'overload: 200s per second', r.overload.goodput, 'req/s'),
    headline(atLeast(s, 'goodput at 10× ÷ goodput at the best concurrency', r.goodputRatio, t.minGoodputRatio)),
    headline(info(s, 'latency p99 of the admitted (200) requests', r.overload.okP99Ms, 'ms')),
    info(s, 'latency p99 at the best concurrency', r.best.okP99Ms, 'ms'),
    info(s, 'refused (503)', r.overload.refused),
    info(s, 'latency p99 of the refusals', r.overload.refusedP99Ms, 'ms'),
    info(s, `Retry-After of the refusals, min / median / max: ${retryText(r.overload)}`, r.overload.retryAfter?.median ?? Number.NaN, 's'),
    info(s, 'RSS idle at start', r.idleRssMb, 'MB'),
    info(s, 'RSS settled before the overload (after the calibration)', r.rssBeforeMb, 'MB'),
    info(s, PEAK_RSS, r.peakRssMb, 'MB'),
    info(s, 'RSS settled after the overload', r.rssAfterMb, 'MB'),
    headline(atMost(s, 'RSS after ÷ before the overload', r.rssGrowth, t.maxRssGrowth)),
    mustHold(s, 'every answer a 200 or a 503 (no 429, no 5xx other than 503)', Object.keys(r.overload.otherStatuses).length === 0),
  ];
}

export function throttledYearFigures(r: ThrottledYearResult): Figure[] {
  const s = 'throttled-year';
  return [
    info(s, "server's QUERY_TIMEOUT_MS", r.queryTimeoutMs, 'ms'),
    info(s, 'pace of the client', r.bytesPerSecond / 1e6, 'MB/s'),
    info(s, 'wall time ÷ QUERY_TIMEOUT_MS', r.timeoutMultiple),
    info(s, 'rows received', r.rows),
    headline(mustHold(s, 'status 200, every row, transfer ended cleanly', r.complete && r.rowsMatch)),
  ];
}

export function capacityFigures(m: CapacityMeasured): Figure[] {
  const { 'slow-readers': slow, overload, 'throttled-year': year } = m;
  return [...(slow ? slowReadersFigures(slow) : []), ...(overload ? overloadFigures(overload) : []), ...(year ? throttledYearFigures(year) : [])];
}

/** Broken rather than short: a clean end with rows missing, or statuses the load should never cause. */
export function capacityProblems(m: CapacityMeasured): string[] {
  const problems: string[] = [];
  const { 'throttled-year': year, overload } = m;
  if (year && year.complete && !year.rowsMatch) problems.push(`throttled-year: a clean 200 with ${year.rows} rows, X-Returned ${year.returnedHeader}, DuckDB count ${year.expectedRows}`);
  if (overload && Object.keys(overload.overload.otherStatuses).length > 0) problems.push(`overload: statuses other than 200 and 503: ${JSON.stringify(overload.overload.otherStatuses)}`);
  return problems;
}
