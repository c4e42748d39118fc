import type { DayWindow } from '../lib/options.ts';
import { extractPath, measureRequest } from '../measure/scenario.ts';
import type { ServerProcess } from '../server/server-process.ts';

export interface GrowthAsk {
  label: string;
  window: DayWindow;
  expectedRows: number;
  /** Short windows are repeated and the median kept: a few milliseconds of noise is a large share of them. */
  repeats: number;
}

export interface GrowthWindow {
  label: string;
  path: string;
  rows: number;
  /** Median over the repeats, request start to last byte: preflight included, as a client waits for it. */
  wallSeconds: number;
  headersMs: number;
  rowsPerSecond: number;
  repeats: number;
}

export interface GrowthResult {
  windows: GrowthWindow[];
  /**
   * Fastest rows/s ÷ slowest rows/s over the windows. "Flat within 20 %" is read as at most 1.2:
   * the cost per row of any window is at most 20 % above the cheapest's, i.e. cost is linear in
   * rows with a fixed part (preflight, first group) too small to show even on one day.
   */
  spread: number;
  complete: boolean;
  rowsMatch: boolean;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** window-sizes: the same hotspot CSV extract over growing, nested windows, one after the other. */
export async function runGrowth(server: ServerProcess, dataset: string, asks: readonly GrowthAsk[]): Promise<GrowthResult> {
  const windows: GrowthWindow[] = [];
  let complete = true;
  let rowsMatch = true;
  for (const ask of asks) {
    const path = extractPath({ dataset, window: ask.window, format: 'csv' });
    const runs = [];
    for (let i = 0; i < ask.repeats; i++) runs.push(await measureRequest(server, path, 'csv'));
    complete &&= runs.every((r) => r.status === 200 && r.complete);
    rowsMatch &&= runs.every((r) => r.rows === r.returnedHeader && r.rows === ask.expectedRows);
    const wallSeconds = median(runs.map((r) => r.wallMs)) / 1000;
    windows.push({
      label: ask.label,
      path,
      rows: ask.expectedRows,
      wallSeconds,
      headersMs: median(runs.map((r) => r.headersMs)),
      rowsPerSecond: ask.expectedRows / wallSeconds,
      repeats: ask.repeats,
    });
  }
  const rates = windows.map((w) => w.rowsPerSecond);
  return { windows, spread: Math.max(...rates) / Math.min(...rates), complete, rowsMatch };
}
