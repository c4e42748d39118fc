import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A figure of the bench's JSON report (bench/measure/table.ts), as a test reads it. */
export interface BenchFigure {
  headline: boolean;
  scenario: string;
  figure: string;
  value: unknown;
  target: string | null;
  pass: boolean | null;
}

export interface BenchReport {
  scenarios: Record<string, Record<string, unknown>>;
  figures: BenchFigure[];
  problems: string[];
}

/** A bench script (`bench/extract.ts`, `bench/readme-table.ts`) run as a child, as an operator runs it. */
export function runBenchScript(script: string, args: string[], timeoutMs: number) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, encoding: 'utf8', timeout: timeoutMs });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr, output: `${run.stdout}\n${run.stderr}` };
}

/** `bench/extract.ts ARGS` with its data and JSON report in a fresh folder; report null if none was written. */
export async function runBenchReport(prefix: string, args: string[], timeoutMs: number) {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  const json = path.join(dir, 'report.json');
  const { status, output } = runBenchScript('bench/extract.ts', [...args, '--data-dir', path.join(dir, 'data'), '--json', json], timeoutMs);
  const report = JSON.parse(await readFile(json, 'utf8').catch(() => 'null')) as BenchReport;
  return { dir, json, status, output, report };
}
