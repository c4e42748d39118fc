import { readStatusMb, sampleRss } from '../server/rss.ts';
import { waitForQuiet } from '../server/server-metrics.ts';
import type { ServerProcess } from '../server/server-process.ts';
import { loadRun, type LoadRun } from './load-run.ts';
import { fire, type SmallWindowsAsk } from './small-windows.ts';

export interface OverloadAsk {
  small: Omit<SmallWindowsAsk, 'connections' | 'seconds'>;
  /** Concurrencies tried to find the server's best, each for `calibrationSeconds`. */
  levels: readonly number[];
  calibrationSeconds: number;
  /** Offered load: this many times the best concurrency, for `seconds`. */
  factor: number;
  seconds: number;
  /** Idle time after a run before memory is read (the engine quiet first). */
  settleMs: number;
}

export interface OverloadResult {
  calibration: LoadRun[];
  best: LoadRun;
  overload: LoadRun;
  goodputRatio: number;
  idleRssMb: number;
  /** Settled after the calibration runs: the server idle, having served its best. */
  rssBeforeMb: number;
  peakRssMb: number;
  /** Settled after the overload. */
  rssAfterMb: number;
  rssGrowth: number;
}

async function settledRssMb(server: ServerProcess, settleMs: number): Promise<number> {
  await waitForQuiet(server.baseUrl);
  await new Promise((r) => setTimeout(r, settleMs));
  return readStatusMb(server.pid, 'VmRSS') ?? Number.NaN;
}

/**
 * Issue #11 (b): the best goodput over a few concurrencies, then `factor` times that concurrency:
 * goodput kept, p99 of the requests admitted, what refusals cost, and memory once it is over.
 */
export async function runOverload(server: ServerProcess, ask: OverloadAsk): Promise<OverloadResult> {
  const idleRssMb = readStatusMb(server.pid, 'VmRSS') ?? Number.NaN;
  await fire(server, { ...ask.small, connections: ask.levels[0] ?? 1, seconds: 1 }, 1, 2);
  const calibration: LoadRun[] = [];
  for (const connections of ask.levels) calibration.push(await loadRun(server, ask.small, connections, ask.calibrationSeconds));
  const best = calibration.reduce((a, b) => (b.goodput > a.goodput ? b : a));
  const rssBeforeMb = await settledRssMb(server, ask.settleMs);
  const rss = sampleRss(server.pid);
  const overload = await loadRun(server, ask.small, best.connections * ask.factor, ask.seconds).finally(() => rss.stop());
  const rssAfterMb = await settledRssMb(server, ask.settleMs);
  return {
    calibration,
    best,
    overload,
    goodputRatio: overload.goodput / best.goodput,
    idleRssMb,
    rssBeforeMb,
    peakRssMb: rss.stop().peakMb,
    rssAfterMb,
    rssGrowth: rssAfterMb / rssBeforeMb,
  };
}
