import type { ScenarioResult } from './scenario.ts';
import { atLeast, atMost, info, mustHold, type Figure } from './table.ts';

/** The targets of issue #2's benchmark table. */
export const TARGETS = {
  A: { maxRatio: 0.8, maxPeakRssMb: 300 },
  B: { minFeaturesPerSecond: 300_000, maxRatio: 1.0 },
  C: { maxRatio: 0.8 },
} as const;

const MB = 1_000_000;

const PEAK_RSS = 'server peak RSS (VmRSS, 50 ms samples)';

/** One scenario's figures in reading order; `judged` holds its targets (throughput, RSS, ratio) where it has them. */
function scenario(r: ScenarioResult, unit: 'rows' | 'features', judged: { throughput?: Figure; rss?: Figure; ratio: Figure }): Figure[] {
  const id = r.id;
  return [
    info(id, 'wall time to last byte', r.wallSeconds, 's'),
    info(id, `${unit} received`, r.rows),
    judged.throughput ?? info(id, `${unit}/s`, r.rowsPerSecond, `${unit}/s`),
    info(id, 'bytes received', r.bytes / MB, 'MB'),
    info(id, 'time to headers (preflight)', r.headersMs, 'ms'),
    info(id, 'time to first byte', r.firstByteMs, 'ms'),
    info(id, 'server CPU time (all threads)', r.serverCpuSeconds, 's'),
    info(id, 'bench client CPU time (receiving)', r.clientCpuSeconds, 's'),
    judged.rss ?? info(id, PEAK_RSS, r.peakRssMb, 'MB'),
    info(id, 'DuckDB COPY wall time', r.referenceSeconds, 's'),
    judged.ratio,
    mustHold(id, `${unit} = X-Returned = DuckDB count = COPY rows`, r.rowsMatch),
    mustHold(id, 'status 200, transfer ended cleanly', r.complete),
  ];
}

export function scenarioFigures(a: ScenarioResult, b: ScenarioResult, c: ScenarioResult): Figure[] {
  return [
    ...scenario(a, 'rows', {
      rss: atMost('A', PEAK_RSS, a.peakRssMb, TARGETS.A.maxPeakRssMb, 'MB'),
      ratio: atMost('A', 'ratio server / DuckDB COPY csv', a.ratio, TARGETS.A.maxRatio),
    }),
    ...scenario(b, 'features', {
      throughput: atLeast('B', 'features/s', b.rowsPerSecond, TARGETS.B.minFeaturesPerSecond, 'features/s'),
      ratio: atMost('B', 'ratio server / DuckDB COPY json', b.ratio, TARGETS.B.maxRatio),
    }),
    ...scenario(c, 'rows', { ratio: atMost('C', 'ratio server / DuckDB COPY csv', c.ratio, TARGETS.C.maxRatio) }),
  ];
}

/** What makes the run broken rather than slow: the exit code is non-zero for these only. */
export function problemsOf(results: readonly ScenarioResult[]): string[] {
  const problems: string[] = [];
  for (const r of results) {
    if (!r.complete) problems.push(`${r.id}: status ${r.status}, transfer did not end cleanly`);
    if (!r.rowsMatch)
      problems.push(`${r.id}: received ${r.rows}, X-Returned ${r.returnedHeader}, DuckDB count ${r.expectedRows}, COPY wrote ${r.referenceRows}`);
  }
  return problems;
}
