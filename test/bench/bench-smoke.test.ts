import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../bench/options.ts';
import { runBenchReport, runBenchScript, type BenchReport } from '../helpers/bench-run.ts';

const NUMERIC = ['wallSeconds', 'rows', 'bytes', 'rowsPerSecond', 'headersMs', 'firstByteMs', 'peakRssMb', 'serverCpuSeconds', 'referenceSeconds', 'referenceRows', 'ratio'];
const TINY = ['--scale', '0.05', '--days', '3', '--end', '2025-08-01'];
// Rows 6 and 8 shortened (1 s, 20 aborts) and few keys: the smoke run proves the machinery, not the figures.
const SHORT = ['--keys', '4', '--small-seconds', '1', '--aborts', '20'];
// Issue #11's scenarios (I, J, K) have their own smoke test (bench-capacity-smoke.test.ts).
const ROWS_1_TO_9 = ['--only', 'A,B,C,D,E,F,G,H'];

const runBench = (args: string[], timeoutMs: number) => runBenchScript('bench/extract.ts', args, timeoutMs);

// The whole bench, end to end, at a size that takes seconds: demo data, server children, HTTP,
// DuckDB COPY, autocannon, aborts.
describe('bench/extract.ts at tiny scale', () => {
  let dir = '';
  let status: number | null = null;
  let output = '';
  let report: BenchReport;

  beforeAll(async () => {
    ({ dir, status, output, report } = await runBenchReport('fire-api-bench-smoke-', [...TINY, ...SHORT, ...ROWS_1_TO_9], 55_000));
  }, 60_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('exits 0 and writes a JSON report', () => {
    expect(status, output).toBe(0);
    expect(report, output).not.toBeNull();
    expect(report.problems).toEqual([]);
  });

  it('states every row (1–9) of the issue\'s table with finite numeric figures, each judged row with a verdict', () => {
    for (let row = 1; row <= 9; row++) {
      const figures = report.figures.filter((f) => f.row === row);
      expect(figures.length, `row ${row}`).toBeGreaterThan(0);
      for (const f of figures) expect(Number.isFinite(f.value), `row ${row}: ${f.figure} = ${String(f.value)}`).toBe(true);
      // Row 5's fresh-server figure is informational; its judged figure is A's warm time to first byte.
      expect(figures.filter((f) => f.target !== null && typeof f.pass === 'boolean').length, `row ${row} has no judged figure`).toBeGreaterThan(0);
    }
    const rowOf = (scenario: string) => new Set(report.figures.filter((f) => f.scenario === scenario && f.row !== null).map((f) => f.row));
    expect([...rowOf('A')].sort()).toEqual([1, 2, 5]);
    expect([...rowOf('E')]).toEqual([5]);
    expect(output).toContain('ratio server / DuckDB COPY');
  });

  it('measures A, B and C with finite numeric figures and rows actually served', () => {
    for (const id of ['A', 'B', 'C']) {
      const s = report.scenarios[id]!;
      for (const key of NUMERIC) expect(Number.isFinite(s[key]), `${id}.${key} = ${String(s[key])}`).toBe(true);
      expect(s.rows as number, `${id} served no rows: the smoke data must not be empty`).toBeGreaterThan(0);
      expect(s.peakRssMb as number).toBeGreaterThan(0);
    }
  });

  it('row counts matched: received = X-Returned = DuckDB count = COPY rows, and each transfer ended cleanly', () => {
    for (const id of ['A', 'B', 'C']) {
      const s = report.scenarios[id]!;
      expect(s.rowsMatch, id).toBe(true);
      expect(s.complete, id).toBe(true);
      expect(s.rows, id).toBe(s.returnedHeader);
      expect(s.rows, id).toBe(s.expectedRows);
      expect(s.rows, id).toBe(s.referenceRows);
    }
  });

  it('runs D–H for real: 4 concurrent extracts, a fresh server, autocannon all 200, 3 growth windows, every abort answered', () => {
    const { D, E, F, G, H } = report.scenarios as Record<string, Record<string, unknown>>;
    expect(D).toMatchObject({ extracts: 4, complete: true, rowsMatch: true });
    expect(E).toMatchObject({ status: 200 });
    expect(F!.requests as number).toBeGreaterThan(0);
    expect(F).toMatchObject({ non2xx: 0, errors: 0, connections: 50, keys: 4 });
    expect((G!.windows as unknown[]).length).toBe(3);
    expect(H).toMatchObject({ requests: 20, non200: 0, broken: 0 });
    expect((H!.abortedMidStream as number) + (H!.endedBeforeAbort as number)).toBe(20);
    expect(H!.busyAfter).toBe(0);
  });

  it('bench/readme-table.ts turns the report into the README table, one line per figure of rows 1–9', () => {
    const run = runBenchScript('bench/readme-table.ts', [path.join(dir, 'report.json')], 20_000);
    expect(run.status, run.stderr).toBe(0);
    const rows = run.stdout.split('\n').filter((l) => /^\| \d+ \|/.test(l));
    expect(new Set(rows.map((l) => l.split('|')[1]!.trim()))).toEqual(new Set(['1', '2', '3', '4', '5', '6', '7', '8', '9']));
    expect(rows).toHaveLength(report.figures.filter((f) => f.row !== null).length);
    expect(run.stdout).toContain('Rows not measured in this run: 10, 11, 12, 13, 14');
  });

  it('--only picks scenarios in the bench\'s order, case-insensitively, and rejects unknown ids', () => {
    expect(parseBenchArgs(['--only', 'g,E']).only).toEqual(['E', 'G']);
    expect(parseBenchArgs([]).only).toEqual(['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M']);
    expect(() => parseBenchArgs(['--only', 'A,Z'])).toThrow(/unknown: Z/);
    expect(parseBenchArgs([]).overloadLevels).toEqual([10, 25, 50, 100]);
    expect(parseBenchArgs(['--overload-levels', '100']).overloadLevels).toEqual([100]);
    expect(() => parseBenchArgs(['--overload-levels', '10,x'])).toThrow(/whole numbers/);
  });

  it('refuses an unknown scenario id with a usage error (exit 2)', () => {
    const run = runBench([...TINY, '--only', 'A,Z'], 20_000);
    expect(run.status, run.output).toBe(2);
    expect(run.output).toContain('unknown: Z');
  });
});

describe('bench/extract.ts columnar rows (L, M) at tiny scale', () => {
  it('serves Parquet and Arrow with every row counted from the bodies themselves, beside DuckDB COPY parquet and A\'s CSV', async () => {
    const { dir, status, output, report } = await runBenchReport('fire-api-bench-columnar-', [...TINY, '--only', 'A,L,M'], 110_000);
    try {
      expect(status, output).toBe(0);
      for (const id of ['L', 'M']) {
        const s = report.scenarios[id]!;
        expect(s, id).toMatchObject({ rowsMatch: true, complete: true });
        expect(s.rows, id).toBe(s.expectedRows);
        expect(s.rows as number, id).toBeGreaterThan(0);
      }
      const rowFigures = (row: number) => report.figures.filter((f) => f.row === row).map((f) => f.figure);
      expect(rowFigures(13)).toEqual(['ratio server Parquet / DuckDB COPY parquet', 'Parquet bytes per row', 'Parquet bytes per row ÷ CSV bytes per row (A)']);
      expect(rowFigures(14)).toEqual(['ratio server Arrow / DuckDB COPY parquet', 'Arrow bytes per row', 'Arrow bytes per row ÷ CSV bytes per row (A)']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('bench/extract.ts data folder safety', () => {
  it('refuses (exit 1) a --data-dir holding files it did not write, and deletes nothing', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-foreign-'));
    try {
      const precious = path.join(dir, 'hotspots', 'date=2025-07-30', 'precious.parquet');
      await mkdir(path.dirname(precious), { recursive: true });
      await writeFile(precious, 'not ours');
      const run = runBench([...TINY, '--data-dir', dir], 20_000);
      expect(run.status, run.output).toBe(1);
      expect(run.stderr).toContain('did not write');
      expect((await stat(precious)).size).toBe('not ours'.length);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
