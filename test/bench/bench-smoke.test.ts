import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface Report {
  scenarios: Record<string, Record<string, unknown>>;
  figures: { scenario: string; figure: string; value: unknown; target: string | null; pass: boolean | null }[];
  problems: string[];
}

const NUMERIC = ['wallSeconds', 'rows', 'bytes', 'rowsPerSecond', 'headersMs', 'firstByteMs', 'peakRssMb', 'serverCpuSeconds', 'referenceSeconds', 'referenceRows', 'ratio'];

// The whole bench, end to end, at a size that takes seconds: demo data, server child, HTTP, DuckDB COPY.
describe('bench/extract.ts at tiny scale', () => {
  let dir = '';
  let status: number | null = null;
  let output = '';
  let report: Report;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-smoke-'));
    const json = path.join(dir, 'report.json');
    const args = ['--import', 'tsx', 'bench/extract.ts', '--scale', '0.05', '--days', '3', '--end', '2025-08-01', '--data-dir', path.join(dir, 'data'), '--json', json];
    const run = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout: 55_000 });
    status = run.status;
    output = `${run.stdout}\n${run.stderr}`;
    report = JSON.parse(await readFile(json, 'utf8').catch(() => 'null')) as Report;
  }, 60_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('exits 0 and writes a JSON report', () => {
    expect(status, output).toBe(0);
    expect(report, output).not.toBeNull();
    expect(report.problems).toEqual([]);
  });

  it('measures every scenario (A, B, C) with finite numeric figures and rows actually served', () => {
    expect(Object.keys(report.scenarios).sort()).toEqual(['A', 'B', 'C']);
    for (const [id, s] of Object.entries(report.scenarios)) {
      for (const key of NUMERIC) expect(Number.isFinite(s[key]), `${id}.${key} = ${String(s[key])}`).toBe(true);
      expect(s.rows as number, `${id} served no rows: the smoke data must not be empty`).toBeGreaterThan(0);
      expect(s.peakRssMb as number).toBeGreaterThan(0);
    }
  });

  it('row counts matched: received = X-Returned = DuckDB count = COPY rows, and each transfer ended cleanly', () => {
    for (const [id, s] of Object.entries(report.scenarios)) {
      expect(s.rowsMatch, id).toBe(true);
      expect(s.complete, id).toBe(true);
      expect(s.rows, id).toBe(s.returnedHeader);
      expect(s.rows, id).toBe(s.expectedRows);
      expect(s.rows, id).toBe(s.referenceRows);
    }
  });

  it('prints and records every target of the issue (A ratio and RSS, B features/s and ratio, C ratio) with a verdict', () => {
    const judged = report.figures.filter((f) => f.target !== null && !f.figure.includes('='));
    const names = judged.map((f) => `${f.scenario}: ${f.figure}`);
    expect(names.filter((n) => n.startsWith('A:') && /ratio|RSS/.test(n))).toHaveLength(2);
    expect(names.filter((n) => n.startsWith('B:') && /ratio|features\/s/.test(n))).toHaveLength(2);
    expect(names.filter((n) => n.startsWith('C:') && /ratio/.test(n))).toHaveLength(1);
    for (const f of judged) expect(typeof f.pass, f.figure).toBe('boolean');
    expect(output).toContain('ratio server / DuckDB COPY');
  });
});

describe('bench/extract.ts data folder safety', () => {
  it('refuses (exit 1) a --data-dir holding files it did not write, and deletes nothing', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-foreign-'));
    try {
      const precious = path.join(dir, 'hotspots', 'date=2025-07-30', 'precious.parquet');
      await mkdir(path.dirname(precious), { recursive: true });
      await writeFile(precious, 'not ours');
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/extract.ts', '--scale', '0.05', '--days', '3', '--end', '2025-08-01', '--data-dir', dir], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(run.status, run.stdout + run.stderr).toBe(1);
      expect(run.stderr).toContain('did not write');
      expect((await stat(precious)).size).toBe('not ours'.length);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
