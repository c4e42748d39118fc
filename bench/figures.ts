import { REFERENCE_THREADS } from './reference.ts';
import { RUNS_PER_SIDE, type ScenarioResult } from './scenario.ts';
import { atLeast, atMost, forRow, info, mustHold, type Figure } from './table.ts';

/** The targets of the benchmark table (issue #5; A–C were issue #2's), by scenario. */
export const TARGETS = {
  A: { maxRatio: 0.8, maxPeakRssMb: 300, maxFirstByteMs: 250 },
  B: { minFeaturesPerSecond: 300_000, maxRatio: 1.0 },
  C: { maxRatio: 0.8 },
  D: { maxPeakRssMb: 600, minSpeedup: 1.0 },
  F: { minRequestsPerSecond: 1_000, maxP99Ms: 50 },
  G: { maxSpread: 1.2 },
  H: { maxBusyAfter: 0, maxRssGrowth: 1.1 },
} as const;

const MB = 1_000_000;

const PEAK_RSS = 'server peak RSS (VmRSS, 50 ms samples)';

/** One scenario's figures in reading order; `judged` holds its targets (throughput, RSS, first byte, ratio) where it has them. */
function scenario(r: ScenarioResult, unit: 'rows' | 'features', judged: { throughput?: Figure; rss?: Figure; firstByte?: Figure; ratio: Figure }): Figure[] {
  const id = r.id;
  return [
    info(id, `wall time to last byte (best of ${RUNS_PER_SIDE})`, r.wallSeconds, 's'),
    info(id, `${unit} received`, r.rows),
    judged.throughput ?? info(id, `${unit}/s`, r.rowsPerSecond, `${unit}/s`),
    info(id, 'bytes received', r.bytes / MB, 'MB'),
    info(id, 'time to headers (preflight)', r.headersMs, 'ms'),
    judged.firstByte ?? info(id, 'time to first byte', r.firstByteMs, 'ms'),
    info(id, 'server CPU time (all threads)', r.serverCpuSeconds, 's'),
    info(id, 'bench client CPU time (receiving)', r.clientCpuSeconds, 's'),
    judged.rss ?? info(id, `${PEAK_RSS}, highest of the runs`, r.peakRssMb, 'MB'),
    info(id, `DuckDB COPY wall time (${REFERENCE_THREADS} threads, best of ${RUNS_PER_SIDE})`, r.referenceSeconds, 's'),
    judged.ratio,
    mustHold(id, `${unit} = X-Returned = DuckDB count = COPY rows`, r.rowsMatch),
    mustHold(id, 'status 200, transfer ended cleanly', r.complete),
  ];
}

/** Bytes per row of a response: what a researcher downloads and stores per record. */
const bytesPerRow = (r: ScenarioResult) => r.bytes / r.rows;

/**
 * L or M: a one-year columnar response beside DuckDB's own Parquet COPY of the same ordered
 * select, and its bytes per row beside A's CSV (when A ran). The issue sets no target: informational.
 */
function columnarFigures(r: ScenarioResult, all: readonly ScenarioResult[]): Figure[] {
  const row = r.id === 'L' ? 13 : 14;
  const name = r.id === 'L' ? 'Parquet' : 'Arrow';
  const csv = all.find((x) => x.id === 'A');
  const figures = scenario(r, 'rows', { ratio: forRow(row, info(r.id, `ratio server ${name} / DuckDB COPY parquet`, r.ratio)) });
  figures.push(forRow(row, info(r.id, `${name} bytes per row`, bytesPerRow(r), 'B')));
  figures.push(info(r.id, 'DuckDB COPY parquet bytes per row', r.referenceBytes / r.referenceRows, 'B'));
  if (csv) figures.push(forRow(row, info(r.id, `${name} bytes per row ÷ CSV bytes per row (A)`, bytesPerRow(r) / bytesPerRow(csv))));
  return figures;
}

/** The figures of A, B, C, L or M, whichever `r` is: each judged against its own row of the table. */
export function scenarioFigures(r: ScenarioResult, all: readonly ScenarioResult[] = []): Figure[] {
  if (r.id === 'L' || r.id === 'M') return columnarFigures(r, all);
  if (r.id === 'A')
    return scenario(r, 'rows', {
      rss: forRow(2, atMost('A', PEAK_RSS, r.peakRssMb, TARGETS.A.maxPeakRssMb, 'MB')),
      firstByte: forRow(5, atMost('A', 'time to first byte (warm server)', r.firstByteMs, TARGETS.A.maxFirstByteMs, 'ms')),
      ratio: forRow(1, atMost('A', 'ratio server / DuckDB COPY csv', r.ratio, TARGETS.A.maxRatio)),
    });
  if (r.id === 'B')
    return scenario(r, 'features', {
      throughput: forRow(3, atLeast('B', 'features/s', r.rowsPerSecond, TARGETS.B.minFeaturesPerSecond, 'features/s')),
      ratio: forRow(3, atMost('B', 'ratio server / DuckDB COPY json', r.ratio, TARGETS.B.maxRatio)),
    });
  return scenario(r, 'rows', { ratio: forRow(9, atMost(r.id, 'ratio server / DuckDB COPY csv', r.ratio, TARGETS.C.maxRatio)) });
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
