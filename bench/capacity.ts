import { hotspots } from '../datasets/hotspots.ts';
import { fullWindow, type BenchOptions, type ScenarioId } from './options.ts';
import { runOverload, type OverloadResult } from './overload.ts';
import type { Plan } from './plan.ts';
import { extractPath, type ScenarioResult } from './scenario.ts';
import { withServer, type ServerSetup } from './session.ts';
import { runSlowReaders, type SlowReadersResult } from './slow-readers.ts';
import { runThrottledYear, type ThrottledYearResult } from './throttled-year.ts';

type Log = (line: string) => void;

/** Issue #11's figures: slow readers (I), overload (J), a throttled year download (K). */
export interface CapacityMeasured {
  I?: SlowReadersResult;
  J?: OverloadResult;
  K?: ThrottledYearResult;
}

/** I's throttled downloads and the small-window connections measured around them (row 6's). */
const SLOW_DOWNLOADS = 8;
const SMALL_WINDOW_CONNECTIONS = 50;
/** The disk budget I's server is given for groups written ahead (TEMP_DIR_MAX_MB), and judged against. */
export const TEMP_BUDGET_MB = 1000;
/** J: the overload offered is this many times the best concurrency found (levels: --overload-levels). */
const OVERLOAD_FACTOR = 10;
/** K: the download lasts this many times the server's QUERY_TIMEOUT_MS. */
const YEAR_TIMEOUT_MULTIPLE = 2.5;
/** Hotspot CSV bytes per row when A did not run to say (measured: about 150). */
const CSV_BYTES_PER_ROW = 150;

const smallAsk = (o: BenchOptions, setup: ServerSetup) => ({ dataset: hotspots.name, window: fullWindow(o), keys: setup.keys });

/** K's pace: the year's CSV spread over 2.5 times the timeout, from A's bytes per row if A ran. */
function yearPace(o: BenchOptions, plan: Plan, extracts: readonly ScenarioResult[]): number {
  const a = extracts.find((r) => r.id === 'A');
  const bytesPerRow = a && a.rows > 0 ? a.bytes / a.rows : CSV_BYTES_PER_ROW;
  const rows = plan.specs.find((s) => s.id === 'A')!.expectedRows;
  return Math.max(1000, (rows * bytesPerRow) / (o.yearTimeoutSeconds * YEAR_TIMEOUT_MULTIPLE));
}

/** Each scenario on its own fresh server: memory and temp disk are judged, and are theirs alone. */
export async function measureCapacity(o: BenchOptions, plan: Plan, setup: ServerSetup, extracts: readonly ScenarioResult[], log: Log): Promise<CapacityMeasured> {
  const only = new Set<ScenarioId>(o.only);
  const out: CapacityMeasured = {};
  const yearPath = extractPath(plan.specs.find((s) => s.id === 'A')!);
  if (only.has('I')) {
    const env = { ...setup.env, TEMP_DIR_MAX_MB: String(TEMP_BUDGET_MB) };
    log(`I: ${SLOW_DOWNLOADS} × GET ${yearPath} at ${o.slowBytesPerSecond / 1000} kB/s each, around ${SMALL_WINDOW_CONNECTIONS} connections of 1-hour windows for ${o.smallSeconds} s ...`);
    const small = { ...smallAsk(o, setup), connections: SMALL_WINDOW_CONNECTIONS, seconds: o.smallSeconds };
    const ask = { small, yearPath, downloads: SLOW_DOWNLOADS, bytesPerSecond: o.slowBytesPerSecond, tempDir: setup.config.tempDir, headWaitMs: 15_000 };
    out.I = (await withServer({ ...setup, env }, o, 'I', { warm: true }, log, (s) => runSlowReaders(s, ask))).value;
    log(`I: ${out.I.unloaded.goodput.toFixed(0)} -> ${out.I.loaded.goodput.toFixed(0)} req/s (200s), p99 ${out.I.unloaded.okP99Ms} -> ${out.I.loaded.okP99Ms} ms, RSS peak ${out.I.peakRssMb.toFixed(0)} MB, TEMP_DIR peak ${out.I.tempPeakMb.toFixed(0)} MB`);
  }
  if (only.has('J')) {
    const calibrationSeconds = Math.max(1, o.smallSeconds / 4);
    log(`J: best goodput over ${o.overloadLevels.join(', ')} connections (${calibrationSeconds} s each), then ${OVERLOAD_FACTOR}× that for ${o.smallSeconds} s ...`);
    // Memory is read 5 s after the engine went quiet (less on a run shortened for a smoke test).
    const settleMs = Math.min(5_000, o.smallSeconds * 250);
    const ask = { small: smallAsk(o, setup), levels: o.overloadLevels, calibrationSeconds, factor: OVERLOAD_FACTOR, seconds: o.smallSeconds, settleMs };
    out.J = (await withServer(setup, o, 'J', { warm: true }, log, (s) => runOverload(s, ask))).value;
    log(`J: best ${out.J.best.goodput.toFixed(0)} req/s at ${out.J.best.connections}; at ${out.J.overload.connections}: ${out.J.overload.goodput.toFixed(0)} req/s, ${out.J.overload.refused} refused; RSS ${out.J.rssBeforeMb.toFixed(0)} -> ${out.J.rssAfterMb.toFixed(0)} MB`);
  }
  if (only.has('K')) {
    const queryTimeoutMs = o.yearTimeoutSeconds * 1000;
    const env = { ...setup.env, QUERY_TIMEOUT_MS: String(queryTimeoutMs) };
    const bytesPerSecond = yearPace(o, plan, extracts);
    log(`K: GET ${yearPath} read at ${(bytesPerSecond / 1e6).toFixed(2)} MB/s, QUERY_TIMEOUT_MS ${queryTimeoutMs} ...`);
    const ask = { path: yearPath, expectedRows: plan.specs.find((s) => s.id === 'A')!.expectedRows, queryTimeoutMs, bytesPerSecond };
    out.K = (await withServer({ ...setup, env }, o, 'K', { warm: true }, log, (s) => runThrottledYear(s, ask))).value;
    log(`K: status ${out.K.status}, ${out.K.rows.toLocaleString('en')} of ${out.K.expectedRows.toLocaleString('en')} rows in ${out.K.wallSeconds.toFixed(1)} s, complete: ${out.K.complete}`);
  }
  return out;
}
