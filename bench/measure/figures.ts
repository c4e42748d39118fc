import { REFERENCE_THREADS } from './reference.ts';
import { RUNS_PER_SIDE, type ScenarioResult } from './scenario.ts';
import { atLeast, atMost, headline, info, mustHold, type Figure } from './table.ts';

/** The targets of the benchmark table (issue #5; year-csv's, month-geojson's and year-readings-csv's were issue #2's), by scenario. */
export const TARGETS = {
  'year-csv': { maxRatio: 0.8, maxPeakRssMb: 300, maxFirstByteMs: 250 },
  'month-geojson': { minFeaturesPerSecond: 300_000, maxRatio: 1.0, maxFeatureRatio: 1.0 },
  'year-readings-csv': { maxRatio: 0.8 },
  'concurrent-year-csv': { maxPeakRssMb: 600, minSpeedup: 1.0 },
  'small-windows': { minRequestsPerSecond: 1_000, maxP99Ms: 50, minFloorRatio: 0.8, maxP99MsVsFloor: 150, maxSequentialRatio: 2 },
  'window-sizes': { maxSpread: 1.2 },
  aborts: { maxBusyAfter: 0, maxRssGrowth: 1.1 },
} as const;

const MB = 1_000_000;

const PEAK_RSS = 'server peak RSS (VmRSS, 50 ms samples)';

/** One scenario's figures in reading order; `judged` holds its targets (throughput, RSS, first byte, ratio) where it has them. */
function scenario(r: ScenarioResult, unit: 'rows' | 'features', judged: { throughput?: Figure; rss?: Figure; firstByte?: Figure; ratio: Figure }): Figure[] {
  const name = r.name;
  return [
    info(name, `wall time to last byte (best of ${RUNS_PER_SIDE})`, r.wallSeconds, 's'),
    info(name, `${unit} received`, r.rows),
    judged.throughput ?? info(name, `${unit}/s`, r.rowsPerSecond, `${unit}/s`),
    info(name, 'bytes received', r.bytes / MB, 'MB'),
    info(name, 'time to headers (preflight)', r.headersMs, 'ms'),
    judged.firstByte ?? info(name, 'time to first byte', r.firstByteMs, 'ms'),
    info(name, 'server CPU time (all threads)', r.serverCpuSeconds, 's'),
    info(name, 'bench client CPU time (receiving)', r.clientCpuSeconds, 's'),
    judged.rss ?? info(name, `${PEAK_RSS}, highest of the runs`, r.peakRssMb, 'MB'),
    info(name, `DuckDB COPY wall time (${REFERENCE_THREADS} threads, best of ${RUNS_PER_SIDE})`, r.referenceSeconds, 's'),
    judged.ratio,
    mustHold(name, `${unit} = X-Returned = DuckDB count = COPY rows`, r.rowsMatch),
    mustHold(name, 'status 200, transfer ended cleanly', r.complete),
  ];
}

/** Bytes per row of a response: what a researcher downloads and stores per record. */
const bytesPerRow = (r: ScenarioResult) => r.bytes / r.rows;

/**
 * year-parquet or year-arrow: a one-year columnar response beside DuckDB's own Parquet COPY of the
 * same ordered select, and its bytes per row beside year-csv's (when it ran). The issue sets no
 * target: informational.
 */
function columnarFigures(r: ScenarioResult, all: readonly ScenarioResult[]): Figure[] {
  const format = r.name === 'year-parquet' ? 'Parquet' : 'Arrow';
  const csv = all.find((x) => x.name === 'year-csv');
  const figures = scenario(r, 'rows', { ratio: headline(info(r.name, `ratio server ${format} / DuckDB COPY parquet`, r.ratio)) });
  figures.push(headline(info(r.name, `${format} bytes per row`, bytesPerRow(r), 'B')));
  figures.push(info(r.name, 'DuckDB COPY parquet bytes per row', r.referenceBytes / r.referenceRows, 'B'));
  if (csv) figures.push(headline(info(r.name, `${format} bytes per row ÷ CSV bytes per row (year-csv)`, bytesPerRow(r) / bytesPerRow(csv))));
  return figures;
}

/**
 * month-geojson: beside DuckDB's flat JSON COPY (the rows as flat objects), DuckDB's JSON writer
 * writing the same rows as Feature objects, which is the work the server's GeoJSON does.
 */
function geojsonFigures(r: ScenarioResult): Figure[] {
  const t = TARGETS['month-geojson'];
  const ratio = headline(atMost(r.name, 'ratio server / DuckDB COPY json (flat rows)', r.ratio, t.maxRatio));
  const figures = scenario(r, 'features', { throughput: headline(atLeast(r.name, 'features/s', r.rowsPerSecond, t.minFeaturesPerSecond, 'features/s')), ratio });
  const f = r.featureReference;
  if (!f) return figures;
  // Beside the flat ratio, before the consistency checks.
  figures.splice(figures.indexOf(ratio) + 1, 0,
    info(r.name, `DuckDB COPY json of the same Feature objects, wall time (${REFERENCE_THREADS} threads, best of ${RUNS_PER_SIDE})`, f.seconds, 's'),
    headline(atMost(r.name, 'ratio server / DuckDB COPY json of the same Feature objects', f.ratio, t.maxFeatureRatio)),
    info(r.name, 'DuckDB COPY json: Feature objects ÷ flat rows (wall time)', f.seconds / r.referenceSeconds),
  );
  return figures;
}

/** The figures of whichever COPY-compared extract `r` is, each judged against its own targets. */
export function scenarioFigures(r: ScenarioResult, all: readonly ScenarioResult[] = []): Figure[] {
  if (r.name === 'year-parquet' || r.name === 'year-arrow') return columnarFigures(r, all);
  if (r.name === 'year-csv') {
    const t = TARGETS['year-csv'];
    return scenario(r, 'rows', {
      rss: headline(atMost(r.name, PEAK_RSS, r.peakRssMb, t.maxPeakRssMb, 'MB')),
      firstByte: headline(atMost(r.name, 'time to first byte (warm server)', r.firstByteMs, t.maxFirstByteMs, 'ms')),
      ratio: headline(atMost(r.name, 'ratio server / DuckDB COPY csv', r.ratio, t.maxRatio)),
    });
  }
  if (r.name === 'month-geojson') return geojsonFigures(r);
  return scenario(r, 'rows', { ratio: headline(atMost(r.name, 'ratio server / DuckDB COPY csv', r.ratio, TARGETS['year-readings-csv'].maxRatio)) });
}

/** What makes the run broken rather than slow: the exit code is non-zero for these only. */
export function problemsOf(results: readonly ScenarioResult[]): string[] {
  const problems: string[] = [];
  for (const r of results) {
    if (!r.complete) problems.push(`${r.name}: status ${r.status}, transfer did not end cleanly`);
    if (!r.rowsMatch)
      problems.push(`${r.name}: received ${r.rows}, X-Returned ${r.returnedHeader}, DuckDB count ${r.expectedRows}, COPY wrote ${r.referenceRows}`);
  }
  return problems;
}
