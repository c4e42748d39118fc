import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../bench/lib/options.ts';
import { runBenchReport, runBenchScript, type BenchReport } from '../helpers/bench-run.ts';

const NUMERIC = ['wallSeconds', 'rows', 'bytes', 'rowsPerSecond', 'headersMs', 'firstByteMs', 'peakRssMb', 'serverCpuSeconds', 'referenceSeconds', 'referenceRows', 'ratio'];
const TINY = ['--scale', '0.05', '--days', '3', '--end', '2025-08-01'];
// small-windows and aborts shortened (1 s, 20 aborts) and few keys: the smoke run proves the machinery, not the figures.
const SHORT = ['--keys', '4', '--small-seconds', '1', '--aborts', '20'];
// Issue #11's scenarios (slow-readers, overload, throttled-year) have their own smoke test (bench-capacity-smoke.test.ts).
const ISSUE_5 = ['year-csv', 'month-geojson', 'year-readings-csv', 'concurrent-year-csv', 'cold-first-byte', 'small-windows', 'window-sizes', 'aborts'];
// The columnar scenarios run in the same bench run, on its shared server (their assertions: the year-parquet, year-arrow test below).
const COLUMNAR = ['year-parquet', 'year-arrow'];
const COPY_COMPARED = ['year-csv', 'month-geojson', 'year-readings-csv'];

const runBench = (args: string[], timeoutMs: number) => runBenchScript('bench/extract.ts', args, timeoutMs);

// The whole bench, end to end, at a size that takes seconds: demo data, server children, HTTP,
// DuckDB COPY, autocannon, aborts.
describe('bench/extract.ts at tiny scale', () => {
  let dir = '';
  let status: number | null = null;
  let output = '';
  let report: BenchReport;

  beforeAll(async () => {
    ({ dir, status, output, report } = await runBenchReport('fire-api-bench-smoke-', [...TINY, ...SHORT, '--only', [...ISSUE_5, ...COLUMNAR].join(',')], 240_000));
  }, 250_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('exits 0 and writes a JSON report', () => {
    expect(status, output).toBe(0);
    expect(report, output).not.toBeNull();
    expect(report.problems).toEqual([]);
  });

  it('states headline figures for every scenario run, finite, each scenario judged but the informational cold first byte', () => {
    const headlines = (scenario: string) => report.figures.filter((f) => f.scenario === scenario && f.headline);
    for (const name of ISSUE_5) {
      expect(headlines(name).length, name).toBeGreaterThan(0);
      for (const f of headlines(name)) expect(Number.isFinite(f.value), `${name}: ${f.figure} = ${String(f.value)}`).toBe(true);
      const judged = headlines(name).filter((f) => f.target !== null && typeof f.pass === 'boolean');
      // The fresh server's first byte is informational; the judged first byte is year-csv's, on a warm server.
      if (name === 'cold-first-byte') expect(judged, name).toEqual([]);
      else expect(judged.length, `${name} has no judged headline figure`).toBeGreaterThan(0);
    }
    expect(headlines('year-csv').map((f) => f.figure).sort()).toEqual(['ratio server / DuckDB COPY csv', 'server peak RSS (VmRSS, 50 ms samples)', 'time to first byte (warm server)']);
    expect(headlines('cold-first-byte').map((f) => f.figure)).toEqual(['time to first byte, fresh server, first request (informational)']);
    expect(output).toContain('ratio server / DuckDB COPY');
  });

  it('measures year-csv, month-geojson and year-readings-csv with finite numeric figures and rows actually served', () => {
    for (const id of COPY_COMPARED) {
      const s = report.scenarios[id]!;
      for (const key of NUMERIC) expect(Number.isFinite(s[key]), `${id}.${key} = ${String(s[key])}`).toBe(true);
      expect(s.rows as number, `${id} served no rows: the smoke data must not be empty`).toBeGreaterThan(0);
      expect(s.peakRssMb as number).toBeGreaterThan(0);
    }
    // GeoJSON also beside DuckDB's JSON writer writing the same rows as Feature objects.
    const features = report.scenarios['month-geojson']!.featureReference as { rows: number; ratio: number };
    expect(features.rows).toBe(report.scenarios['month-geojson']!.expectedRows);
    expect(Number.isFinite(features.ratio)).toBe(true);
    expect(report.figures.filter((f) => f.scenario === 'month-geojson' && f.headline).map((f) => f.figure)).toContain('ratio server / DuckDB COPY json of the same Feature objects');
  });

  it('row counts matched: received = X-Returned = DuckDB count = COPY rows, and each transfer ended cleanly', () => {
    for (const id of COPY_COMPARED) {
      const s = report.scenarios[id]!;
      expect(s.rowsMatch, id).toBe(true);
      expect(s.complete, id).toBe(true);
      expect(s.rows, id).toBe(s.returnedHeader);
      expect(s.rows, id).toBe(s.expectedRows);
      expect(s.rows, id).toBe(s.referenceRows);
    }
  });

  it('runs the load scenarios for real: 4 concurrent extracts, a fresh server, autocannon all 200, 3 window sizes, every abort answered', () => {
    const { 'concurrent-year-csv': concurrent, 'cold-first-byte': cold, 'small-windows': small, 'window-sizes': sizes, aborts } = report.scenarios;
    expect(concurrent).toMatchObject({ extracts: 4, complete: true, rowsMatch: true });
    expect(cold).toMatchObject({ status: 200 });
    expect(small!.requests as number).toBeGreaterThan(0);
    expect(small).toMatchObject({ non2xx: 0, errors: 0, connections: 50, keys: 4 });
    // The engine floor ran the same hours in the bench's DuckDB, and one client measured its p50.
    const { floor, sequential } = small as { floor: { queries: number; sequentialQueries: number; meanRows: number }; sequential: { requests: number; p50Ms: number } };
    expect(floor.queries).toBeGreaterThan(0);
    expect(floor.sequentialQueries).toBeGreaterThan(0);
    expect(floor.meanRows).toBeGreaterThan(0);
    expect(sequential.requests).toBeGreaterThan(0);
    // The warm-up is kept apart, and the measured run began once its renderings were done.
    const { warmup } = small as { warmup: { requests: number; peakRssMb: number; renderingsPendingAfter: number | null } };
    expect(warmup.requests).toBeGreaterThan(0);
    expect(warmup.peakRssMb).toBeGreaterThan(0);
    expect(warmup.renderingsPendingAfter).toBe(0);
    expect((sizes!.windows as unknown[]).length).toBe(3);
    expect(aborts).toMatchObject({ requests: 20, non200: 0, broken: 0 });
    expect((aborts!.abortedMidStream as number) + (aborts!.endedBeforeAbort as number)).toBe(20);
    expect(aborts!.busyAfter).toBe(0);
  });

  it('bench/readme-table.ts turns the report into the performance table, one line per headline figure of each scenario run', () => {
    const run = runBenchScript('bench/readme-table.ts', [path.join(dir, 'report.json')], 60_000);
    expect(run.status, run.stderr).toBe(0);
    const rows = run.stdout.split('\n').filter((l) => /^\| [a-z-]+ \|/.test(l) && !l.startsWith('| scenario |'));
    expect(new Set(rows.map((l) => l.split('|')[1]!.trim()))).toEqual(new Set([...ISSUE_5, ...COLUMNAR]));
    expect(rows).toHaveLength(report.figures.filter((f) => f.headline).length);
    expect(run.stdout).toContain('Scenarios not measured in this run: slow-readers, overload, throttled-year, aggregate, soak.');
  });

  // Was a bench run of its own (year-csv, year-parquet, year-arrow with 50 keys); the same assertions on the run above.
  it('year-parquet, year-arrow: Parquet and Arrow served with every row counted from the bodies themselves, beside DuckDB COPY parquet and year-csv\'s CSV', () => {
    for (const id of COLUMNAR) {
      const s = report.scenarios[id]!;
      expect(s, id).toMatchObject({ rowsMatch: true, complete: true });
      expect(s.rows, id).toBe(s.expectedRows);
      expect(s.rows as number, id).toBeGreaterThan(0);
    }
    const headlines = (scenario: string) => report.figures.filter((f) => f.scenario === scenario && f.headline).map((f) => f.figure);
    expect(headlines('year-parquet')).toEqual(['ratio server Parquet / DuckDB COPY parquet', 'Parquet bytes per row', 'Parquet bytes per row ÷ CSV bytes per row (year-csv)']);
    expect(headlines('year-arrow')).toEqual(['ratio server Arrow / DuckDB COPY parquet', 'Arrow bytes per row', 'Arrow bytes per row ÷ CSV bytes per row (year-csv)']);
  });

  it('--only picks scenarios by name in the bench\'s order, case-insensitively, and rejects unknown names (the old letters too)', () => {
    expect(parseBenchArgs(['--only', 'window-sizes,Cold-First-Byte']).only).toEqual(['cold-first-byte', 'window-sizes']);
    expect(parseBenchArgs([]).only).toEqual([
      'year-csv', 'month-geojson', 'year-readings-csv', 'concurrent-year-csv', 'cold-first-byte', 'small-windows', 'window-sizes',
      'aborts', 'slow-readers', 'overload', 'throttled-year', 'year-parquet', 'year-arrow', 'aggregate', 'soak',
    ]);
    expect(() => parseBenchArgs(['--only', 'year-csv,Z'])).toThrow(/unknown: Z/);
    expect(() => parseBenchArgs(['--only', 'A'])).toThrow(/among year-csv, month-geojson, .*; unknown: A$/);
    expect(parseBenchArgs([]).overloadLevels).toEqual([10, 25, 50, 100]);
    expect(parseBenchArgs(['--overload-levels', '100']).overloadLevels).toEqual([100]);
    expect(() => parseBenchArgs(['--overload-levels', '10,x'])).toThrow(/whole numbers/);
  });

  it('refuses an unknown scenario name with a usage error listing the names (exit 2)', () => {
    const run = runBench([...TINY, '--only', 'year-csv,Z'], 60_000);
    expect(run.status, run.output).toBe(2);
    expect(run.output).toContain('unknown: Z');
    expect(run.output).toContain('--only takes scenario names among year-csv, month-geojson,');
  });
});

describe('bench/extract.ts data folder safety', () => {
  it('refuses (exit 1) a --data-dir holding files it did not write, and deletes nothing', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-foreign-'));
    try {
      const precious = path.join(dir, 'hotspots', 'date=2025-07-30', 'precious.parquet');
      await mkdir(path.dirname(precious), { recursive: true });
      await writeFile(precious, 'not ours');
      const run = runBench([...TINY, '--data-dir', dir], 60_000);
      expect(run.status, run.output).toBe(1);
      expect(run.stderr).toContain('did not write');
      expect((await stat(precious)).size).toBe('not ours'.length);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
