import { readFileSync } from 'node:fs';
import os from 'node:os';

export interface Figure {
  /** A figure of the performance table (bench/readme-table.ts), not only of the bench's own. */
  headline: boolean;
  scenario: string;
  figure: string;
  value: number | boolean;
  unit: string;
  /** Human-readable target, e.g. "≤ 0.8"; null for a figure that is reported, not judged. */
  target: string | null;
  /** null when there is no target. */
  pass: boolean | null;
}

export interface Machine {
  cores: number;
  memoryGiB: number;
  cpuModel: string;
  node: string;
  platform: string;
}

export function describeMachine(): Machine {
  let cpuModel = os.cpus()[0]?.model ?? 'unknown';
  try {
    cpuModel = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpuModel;
  } catch {
    // Not Linux: os.cpus() is the best there is.
  }
  return {
    cores: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    cpuModel,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

export const info = (scenario: string, figure: string, value: number | boolean, unit = ''): Figure => ({ headline: false, scenario, figure, value, unit, target: null, pass: null });

/** Marks `f` as (one of) the figure(s) its scenario shows in the performance table. */
export const headline = (f: Figure): Figure => ({ ...f, headline: true });

export const atMost = (scenario: string, figure: string, value: number, limit: number, unit = ''): Figure => ({
  headline: false,
  scenario,
  figure,
  value,
  unit,
  target: `≤ ${limit.toLocaleString('en')}${unit ? ' ' + unit : ''}`,
  pass: Number.isFinite(value) && value <= limit,
});

export const atLeast = (scenario: string, figure: string, value: number, limit: number, unit = ''): Figure => ({
  headline: false,
  scenario,
  figure,
  value,
  unit,
  target: `≥ ${limit.toLocaleString('en')}${unit ? ' ' + unit : ''}`,
  pass: Number.isFinite(value) && value >= limit,
});

/** A check that must hold for the figures to mean anything (row counts, clean end). */
export const mustHold = (scenario: string, figure: string, value: boolean): Figure => ({ headline: false, scenario, figure, value, unit: '', target: 'yes', pass: value });

export function formatValue(f: Figure): string {
  if (typeof f.value === 'boolean') return f.value ? 'yes' : 'no';
  const v = f.value as number | null;
  // NaN (nothing to measure, e.g. a p99 with no 200 at all) is null once written to JSON.
  if (v === null || !Number.isFinite(v)) return 'none';
  const digits = Math.abs(v) >= 1000 || Number.isInteger(v) ? 0 : Math.abs(v) >= 10 ? 1 : Math.abs(v) >= 1 ? 2 : 3;
  const text = v.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  return f.unit ? `${text} ${f.unit}` : text;
}

export const verdict = (f: Figure) => (f.pass === null ? '' : f.pass ? 'pass' : 'short');

/** A plain-text table, one figure per line, readable in a terminal and pasteable into an issue. */
export function renderTable(figures: readonly Figure[]): string {
  const header = ['*', 'scenario', 'figure', 'value', 'target', 'result'];
  const rows = figures.map((f) => [f.headline ? '*' : '', f.scenario, f.figure, formatValue(f), f.target ?? '', verdict(f)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function renderMachine(m: Machine): string {
  return `machine: ${m.cores} cores (os.availableParallelism), ${m.memoryGiB} GiB, ${m.cpuModel}, node ${m.node}, ${m.platform}`;
}
