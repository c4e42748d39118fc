import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBenchReport, runBenchScript, type BenchReport } from '../helpers/bench-run.ts';

type Scenario = Record<string, unknown>;

// Three days of small data (the year's CSV ~750 kB: many times one socket read, so a download that is
// not held back ends at once); 1 s load runs; downloads read at 2 kB/s so they are still in flight when
// the small windows have been measured (then the bench cuts them); throttled-year's server times out
// after 1 s and its download lasts 2.5 s.
const ARGS = ['--scale', '0.5', '--days', '3', '--end', '2025-08-01', '--keys', '4', '--small-seconds', '1', '--slow-kb-s', '2', '--year-timeout-s', '1', '--only', 'slow-readers,overload,throttled-year'];
const CAPACITY = ['slow-readers', 'overload', 'throttled-year'];

// Issue #11's bench section end to end at a size that takes seconds: throttled downloads around
// autocannon, the overload search, a paced download past QUERY_TIMEOUT_MS, each on its own server.
describe('bench/extract.ts --only slow-readers,overload,throttled-year at tiny scale', () => {
  let dir = '';
  let status: number | null = null;
  let output = '';
  let report: BenchReport;

  beforeAll(async () => {
    ({ dir, status, output, report } = await runBenchReport('fire-api-bench-capacity-', ARGS, 240_000));
  }, 250_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('exits 0 with a report and no broken run', () => {
    expect(status, output).toBe(0);
    expect(report, output).not.toBeNull();
    expect(report.problems).toEqual([]);
  });

  it('slow-readers: 8 throttled downloads were open throughout, and small windows were answered with and without them', () => {
    const slow = report.scenarios['slow-readers']!;
    expect(slow).toMatchObject({ downloads: 8, downloadsInFlight: 8, bytesPerSecond: 2000 });
    expect((slow.unloaded as Scenario).ok as number).toBeGreaterThan(0);
    expect((slow.loaded as Scenario).ok as number).toBeGreaterThan(0);
    // The bench's own pacing held: all 8 still in flight after the two load runs, and read at a pace near
    // 2 kB/s (plus one socket read, up to 64 kB, before the first pause), not as fast as loopback allows.
    // Unthrottled, the ~750 kB each would have arrived in milliseconds.
    expect(slow.downloadMbPerSecond as number).toBeLessThan(0.1);
  });

  it('overload: four calibration runs, then 10 times the best concurrency, answered only with 200 or 503', () => {
    const overload = report.scenarios.overload!;
    const best = overload.best as Scenario;
    expect((overload.calibration as unknown[]).length).toBe(4);
    expect((overload.overload as Scenario).connections).toBe((best.connections as number) * 10);
    expect((overload.overload as Scenario).ok as number).toBeGreaterThan(0);
    expect((overload.overload as Scenario).otherStatuses).toEqual({});
    expect(Number.isFinite(overload.rssAfterMb)).toBe(true);
  });

  it('throttled-year: the paced download outlived QUERY_TIMEOUT_MS and still ended cleanly with every row', () => {
    const year = report.scenarios['throttled-year']!;
    expect(year.timeoutMultiple as number).toBeGreaterThan(1);
    expect(year.expectedRows as number).toBeGreaterThan(0);
    expect(year).toMatchObject({ status: 200, complete: true, rowsMatch: true });
    expect(year.rows).toBe(year.expectedRows);
    expect(year.returnedHeader).toBe(year.expectedRows);
  });

  it('each capacity scenario has finite judged headline figures in the table, and in the performance table', () => {
    for (const name of CAPACITY) {
      const judged = report.figures.filter((f) => f.scenario === name && f.headline && typeof f.pass === 'boolean');
      expect(judged.length, name).toBeGreaterThan(0);
      for (const f of judged.filter((f) => typeof f.value === 'number')) expect(Number.isFinite(f.value), `${f.figure}`).toBe(true);
    }
    const table = runBenchScript('bench/readme-table.ts', [path.join(dir, 'report.json')], 60_000);
    expect(table.status, table.stderr).toBe(0);
    const rows = new Set(table.stdout.split('\n').filter((l) => /^\| [a-z-]+ \|/.test(l) && !l.startsWith('| scenario |')).map((l) => l.split('|')[1]!.trim()));
    expect(rows).toEqual(new Set(CAPACITY));
  });
});
