import { hotspots } from '../../datasets/hotspots.ts';
import { fullWindow, type BenchOptions } from '../lib/options.ts';
import { runOverload, type OverloadResult } from './overload.ts';
import { planned, type Plan } from '../measure/plan.ts';
import { extractPath, type ScenarioResult } from '../measure/scenario.ts';
import type { ScenarioName } from '../lib/scenario-names.ts';
import { withServer, type ServerSetup } from '../measure/session.ts';
import { runSlowReaders, type SlowReadersResult } from './slow-readers.ts';
import { runThrottledYear, type ThrottledYearResult } from './throttled-year.ts';

type Log = (line: string) => void;

/** Issue #11's scenarios, by name: (a) slow-readers, (b) overload, (c) throttled-year. */
export interface CapacityMeasured {
  'slow-readers'?: SlowReadersResult;
  overload?: OverloadResult;
  'throttled-year'?: ThrottledYearResult;
}

/** slow-readers' throttled downloads and the small-window connections measured around them (small-windows' own). */
const SLOW_DOWNLOADS = 8;
const SMALL_WINDOW_CONNECTIONS = 50;
/** The disk budget slow-readers' server is given for groups written ahead (TEMP_DIR_MAX_MB), and judged against. */
export const TEMP_BUDGET_MB = 1000;
/** overload: the load offered is this many times the best concurrency found (levels: --overload-levels). */
const OVERLOAD_FACTOR = 10;
/** throttled-year: the download lasts this many times the server's QUERY_TIMEOUT_MS. */
const YEAR_TIMEOUT_MULTIPLE = 2.5;
/** Hotspot CSV bytes per row when year-csv did not run to say (measured: about 150). */
const CSV_BYTES_PER_ROW = 150;

const smallAsk = (o: BenchOptions, setup: ServerSetup) => ({ dataset: hotspots.name, window: fullWindow(o), keys: setup.keys });

/** throttled-year's pace: the year's CSV spread over 2.5 times the timeout, from year-csv's bytes per row if it ran. */
function yearPace(o: BenchOptions, plan: Plan, extracts: readonly ScenarioResult[]): number {
  const measured = extracts.find((r) => r.name === 'year-csv');
  const bytesPerRow = measured && measured.rows > 0 ? measured.bytes / measured.rows : CSV_BYTES_PER_ROW;
  const rows = planned(plan, 'year-csv').expectedRows;
  return Math.max(1000, (rows * bytesPerRow) / (o.yearTimeoutSeconds * YEAR_TIMEOUT_MULTIPLE));
}

/** Each scenario on its own fresh server: memory and temp disk are judged, and are theirs alone. */
export async function measureCapacity(o: BenchOptions, plan: Plan, setup: ServerSetup, extracts: readonly ScenarioResult[], log: Log): Promise<CapacityMeasured> {
  const only = new Set<ScenarioName>(o.only);
  const out: CapacityMeasured = {};
  const year = planned(plan, 'year-csv');
  const yearPath = extractPath(year);
  if (only.has('slow-readers')) {
    const env = { ...setup.env, TEMP_DIR_MAX_MB: String(TEMP_BUDGET_MB) };
    log(`slow-readers: ${SLOW_DOWNLOADS} × GET ${yearPath} at ${o.slowBytesPerSecond / 1000} kB/s each, around ${SMALL_WINDOW_CONNECTIONS} connections of 1-hour windows for ${o.smallSeconds} s ...`);
    const small = { ...smallAsk(o, setup), connections: SMALL_WINDOW_CONNECTIONS, seconds: o.smallSeconds };
    const ask = { small, yearPath, downloads: SLOW_DOWNLOADS, bytesPerSecond: o.slowBytesPerSecond, tempDir: setup.config.tempDir, headWaitMs: 15_000 };
    const r = (await withServer({ ...setup, env }, o, 'slow-readers', { warm: true }, log, (s) => runSlowReaders(s, ask))).value;
    log(`slow-readers: ${r.unloaded.goodput.toFixed(0)} -> ${r.loaded.goodput.toFixed(0)} req/s (200s), p99 ${r.unloaded.okP99Ms} -> ${r.loaded.okP99Ms} ms, RSS peak ${r.peakRssMb.toFixed(0)} MB, TEMP_DIR peak ${r.tempPeakMb.toFixed(0)} MB (renderings apart: ${r.renderingsPeakMb.toFixed(0)} MB)`);
    out['slow-readers'] = r;
  }
  if (only.has('overload')) {
    const calibrationSeconds = Math.max(1, o.smallSeconds / 4);
    log(`overload: best goodput over ${o.overloadLevels.join(', ')} connections (${calibrationSeconds} s each), then ${OVERLOAD_FACTOR}× that for ${o.smallSeconds} s ...`);
    // Memory is read 5 s after the engine went quiet (less on a run shortened for a smoke test).
    const settleMs = Math.min(5_000, o.smallSeconds * 250);
    const ask = { small: smallAsk(o, setup), levels: o.overloadLevels, calibrationSeconds, factor: OVERLOAD_FACTOR, seconds: o.smallSeconds, settleMs };
    const r = (await withServer(setup, o, 'overload', { warm: true }, log, (s) => runOverload(s, ask))).value;
    log(`overload: best ${r.best.goodput.toFixed(0)} req/s at ${r.best.connections}; at ${r.overload.connections}: ${r.overload.goodput.toFixed(0)} req/s, ${r.overload.refused} refused; RSS ${r.rssBeforeMb.toFixed(0)} -> ${r.rssAfterMb.toFixed(0)} MB`);
    out.overload = r;
  }
  if (only.has('throttled-year')) {
    const queryTimeoutMs = o.yearTimeoutSeconds * 1000;
    const env = { ...setup.env, QUERY_TIMEOUT_MS: String(queryTimeoutMs) };
    const bytesPerSecond = yearPace(o, plan, extracts);
    log(`throttled-year: GET ${yearPath} read at ${(bytesPerSecond / 1e6).toFixed(2)} MB/s, QUERY_TIMEOUT_MS ${queryTimeoutMs} ...`);
    const ask = { path: yearPath, expectedRows: year.expectedRows, queryTimeoutMs, bytesPerSecond };
    const r = (await withServer({ ...setup, env }, o, 'throttled-year', { warm: true }, log, (s) => runThrottledYear(s, ask))).value;
    log(`throttled-year: status ${r.status}, ${r.rows.toLocaleString('en')} of ${r.expectedRows.toLocaleString('en')} rows in ${r.wallSeconds.toFixed(1)} s, complete: ${r.complete}`);
    out['throttled-year'] = r;
  }
  return out;
}
