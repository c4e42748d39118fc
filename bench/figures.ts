import type { ScenarioResult } from './scenario.ts';
import { atLeast, atMost, info, mustHold, type Figure } from './table.ts';

/** The targets of issue #2's benchmark table. */
export const TARGETS = {
  A: { maxRatio: 0.8, maxPeakRssMb: 300 },
  B: { minFeaturesPerSecond: 300_000, maxRatio: 1.0 },
  C: { maxRatio: 0.8 },
} as const;

const MB = 1_000_000;

/** Figures every scenario reports; the judged ones are added per scenario below. */
function common(r: ScenarioResult, unit: 'rows' | 'features'): Figure[] {
  const id = r.id;
  return [
    info(id, 'wall time to last byte', r.wallSeconds, 's'),
    info(id, `${unit} received`, r.rows),
    info(id, 'bytes received', r.bytes / MB, 'MB'),
    info(id, 'time to headers (preflight)', r.headersMs, 'ms'),
    info(id, 'time to first byte', r.firstByteMs, 'ms'),
    info(id, 'server CPU time (all threads)', r.serverCpuSeconds, 's'),
    info(id, 'DuckDB COPY wall time', r.referenceSeconds, 's'),
    mustHold(id, `${unit} = X-Returned = DuckDB count = COPY rows`, r.rowsMatch),
    mustHold(id, 'status 200, transfer ended cleanly', r.complete),
  ];
}

export function scenarioFigures(a: ScenarioResult, b: ScenarioResult, c: ScenarioResult): Figure[] {
  return [
    ...common(a, 'rows'),
    info('A', 'rows/s', a.rowsPerSecond, 'rows/s'),
    atMost('A', 'server peak RSS (VmRSS, 50 ms samples)', a.peakRssMb, TARGETS.A.maxPeakRssMb, 'MB'),
    atMost('A', 'ratio server / DuckDB COPY csv', a.ratio, TARGETS.A.maxRatio),
    ...common(b, 'features'),
    atLeast('B', 'features/s', b.rowsPerSecond, TARGETS.B.minFeaturesPerSecond, 'features/s'),
    info('B', 'server peak RSS (VmRSS, 50 ms samples)', b.peakRssMb, 'MB'),
    atMost('B', 'ratio server / DuckDB COPY json', b.ratio, TARGETS.B.maxRatio),
    ...common(c, 'rows'),
    info('C', 'rows/s', c.rowsPerSecond, 'rows/s'),
    info('C', 'server peak RSS (VmRSS, 50 ms samples)', c.peakRssMb, 'MB'),
    atMost('C', 'ratio server / DuckDB COPY csv', c.ratio, TARGETS.C.maxRatio),
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
