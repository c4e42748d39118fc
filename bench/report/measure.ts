import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { hotspots } from '../../datasets/hotspots.ts';
import { runAborts, type AbortsResult } from '../scenarios/aborts.ts';
import { AGGREGATE_CASES, AGGREGATE_COLD_ENV, AGGREGATE_REPEAT_ENV, measureAggregates, type AggregateResult } from '../scenarios/aggregate-scenario.ts';
import { measureRepeats } from '../scenarios/aggregate-repeat.ts';
import { measureCapacity, type CapacityMeasured } from '../scenarios/capacity.ts';
import { measureColdStart, type ColdStartResult } from '../scenarios/cold-start.ts';
import { runConcurrent, type ConcurrentResult } from '../scenarios/concurrent.ts';
import { runGrowth, type GrowthResult } from '../scenarios/growth.ts';
import { fullWindow, type BenchOptions } from '../lib/options.ts';
import { planned, type Plan } from '../measure/plan.ts';
import { REFERENCE_THREADS } from '../measure/reference.ts';
import { extractPath, measureRequest, runScenario, type ScenarioResult } from '../measure/scenario.ts';
import type { ScenarioName } from '../lib/scenario-names.ts';
import type { ServerProcess } from '../server/server-process.ts';
import { prepareSetup, withServer, type ServerSetup, type Session } from '../measure/session.ts';
import { runEngineFloor, type FloorResult } from '../scenarios/engine-floor.ts';
import { runSmallWindows, type SmallWindowsResult } from '../scenarios/small-windows.ts';
import { runSoak, type SoakResult } from '../scenarios/soak.ts';

type Log = (line: string) => void;

/** concurrent-year-csv's extracts started together; small-windows' connections; aborts' in flight. */
const CONCURRENT_EXTRACTS = 4;
const SMALL_WINDOW_CONNECTIONS = 50;
const ABORT_CONCURRENCY = 8;
const ABORT_WINDOW_DAYS = 28;
/** CSV is ~150 bytes a hotspot row, GeoJSON more: half a window's CSV is mid-stream in either format. */
const CSV_BYTES_PER_ROW = 150;
const MAX_ABORT_BYTES = 8 * 1024 * 1024;

/** The scenarios measured on one shared, warmed server; every other scenario gets a fresh server of its own. */
const SHARED_SERVER: readonly ScenarioName[] = ['year-csv', 'month-geojson', 'year-readings-csv', 'year-parquet', 'year-arrow', 'window-sizes'];

/** The load scenarios' results, by name (figures-load.ts makes their figures). */
export interface LoadMeasured {
  'concurrent-year-csv'?: ConcurrentResult;
  'cold-first-byte'?: ColdStartResult;
  'small-windows'?: SmallWindowsResult & { floor: FloorResult };
  'window-sizes'?: GrowthResult;
  aborts?: AbortsResult;
  aggregate?: AggregateResult;
  soak?: SoakResult;
}

export interface Measured {
  extracts: ScenarioResult[];
  load: LoadMeasured;
  /** Issue #11's scenarios: slow-readers, overload, throttled-year. */
  capacity: CapacityMeasured;
  /** The shared server's session (null when none of its scenarios ran). */
  shared: Session<unknown> | null;
  rateLimitPerMinute: number;
  /** os.loadavg() before the first server and after the last: other work on the machine shows here. */
  loadAverage: { before: number[]; after: number[] };
}

/** The aggregates computed on a server without their cache, then asked again on one with it. */
async function measureAggregateScenario(o: BenchOptions, setup: ServerSetup, log: Log): Promise<AggregateResult> {
  const on = (env: Record<string, string>) => ({ ...setup, env: { ...setup.env, ...env } });
  const r = (await withServer(on(AGGREGATE_COLD_ENV), o, 'aggregate, cold', { warm: true }, log, (s) => measureAggregates(s, o.dataDir, fullWindow(o), 3, log))).value;
  r.repeats = (await withServer(on(AGGREGATE_REPEAT_ENV), o, 'aggregate, repeat', { warm: true }, log, (s) => measureRepeats(s, AGGREGATE_CASES, fullWindow(o), 3, log))).value;
  return r;
}

/** The COPY-compared extracts, then window-sizes, on the shared server; year-csv runs first, so its peak RSS is its own. */
async function runShared(server: ServerProcess, o: BenchOptions, plan: Plan, setup: ServerSetup, only: Set<ScenarioName>, log: Log, m: Measured): Promise<void> {
  for (const s of plan.specs.filter((s) => only.has(s.name))) {
    log(`${s.name}: GET ${extractPath(s)} (${s.title}) ...`);
    // The reference is DuckDB at its fastest here: one statement on every core (its own default), not
    // the server's one thread per statement, which would make the server's ratio look better than it is.
    const r = await runScenario(server, s, { dataDir: o.dataDir, threads: REFERENCE_THREADS, memoryLimit: setup.config.duckdbMemoryLimit }, setup.config.renderCacheBytes > 0);
    const times = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ');
    const b = r.beforeRendering;
    if (b) log(`${s.name}: before its files were rendered ${b.seconds.toFixed(2)} s (peak RSS ${b.peakRssMb.toFixed(0)} MB); rendered ${b.renderedAfterSeconds.toFixed(1)} s after (files still waiting: ${b.pendingAfter}); the runs below are from renderings`);
    const features = r.featureReference ? `; COPY of the Feature objects ${times(r.featureReference.runsSeconds)} s` : '';
    log(`${s.name}: server ${times(r.serverRunsSeconds)} s, ${r.rows.toLocaleString('en')} rows; DuckDB COPY ${times(r.referenceRunsSeconds)} s${features} (best of each compared)`);
    m.extracts.push(r);
  }
  if (only.has('window-sizes')) {
    log('window-sizes: 1-day, 1-month, 1-year hotspot CSV windows ...');
    const [year, month] = [planned(plan, 'year-csv'), planned(plan, 'month-geojson')];
    const sizes = await runGrowth(server, hotspots.name, [
      { label: 'day', window: plan.day.window, expectedRows: plan.day.rows, repeats: 5 },
      { label: 'month', window: month.window, expectedRows: month.expectedRows, repeats: 3 },
      { label: 'year', window: year.window, expectedRows: year.expectedRows, repeats: 1 },
    ]);
    log(`window-sizes: ${sizes.windows.map((w) => `${w.label} ${Math.round(w.rowsPerSecond).toLocaleString('en')} rows/s`).join(', ')}`);
    m.load['window-sizes'] = sizes;
  }
}

/**
 * small-windows on a server of its own (it judges memory), rendering the files present at start as
 * shipped (RENDER_AT_START); the bench waits for those renderings after its warm-up burst. Then the
 * engine floor in the bench process, the server idle.
 */
async function measureSmallWindows(o: BenchOptions, setup: ServerSetup, log: Log): Promise<NonNullable<Measured['load']['small-windows']>> {
  const on = { ...setup, env: { ...setup.env, RENDER_AT_START: 'true' } };
  const ask = { dataset: hotspots.name, window: fullWindow(o), connections: SMALL_WINDOW_CONNECTIONS, seconds: o.smallSeconds, keys: setup.keys };
  const small = (await withServer(on, o, 'small-windows', { warm: true }, log, async (server) => {
    log(`small-windows: ${SMALL_WINDOW_CONNECTIONS} connections, ${o.smallSeconds} s of 1-hour GeoJSON windows (autocannon) ...`);
    return runSmallWindows(server, ask);
  })).value;
  log(`small-windows: ${small.requestsPerSecond.toFixed(0)} req/s, p99 ${small.latencyP99Ms} ms, statuses ${JSON.stringify(small.statusCounts)}; one client: p50 ${small.sequential.p50Ms} ms`);
  const { duckdbConnections: connections, duckdbThreads: threads, duckdbMemoryLimit: memoryLimit } = setup.config;
  log(`small-windows: engine floor, DuckDB in the bench process (${connections} connections, ${threads} thread(s)), the same hours ...`);
  const floor = await runEngineFloor(
    { dataDir: o.dataDir, dataset: hotspots.name, timeColumn: hotspots.time!.column, orderBy: hotspots.orderBy, window: fullWindow(o), connections, threads, memoryLimit, seconds: o.smallSeconds, sequentialSeconds: small.sequential.seconds },
    1,
  );
  log(`small-windows: engine floor ${floor.queriesPerSecond.toFixed(0)} q/s, p99 ${floor.p99Ms.toFixed(1)} ms; one connection p50 ${floor.sequentialP50Ms.toFixed(1)} ms`);
  return { ...small, floor };
}

/** concurrent-year-csv on a fresh server: the single-extract rows/s comes from year-csv when it ran (its first request, before rendering, when renderings are on), else from one extract measured here first. */
async function runConcurrentYear(server: ServerProcess, plan: Plan, m: Measured, log: Log): Promise<ConcurrentResult> {
  const year = planned(plan, 'year-csv');
  const path = extractPath(year);
  const fromYearCsv = m.extracts.find((r) => r.name === 'year-csv');
  // Like with like: the four extracts here run on a fresh server, before their files are rendered, so
  // the one they are compared with is year-csv's first request (also before rendering), not its runs
  // read from renderings.
  const first = fromYearCsv?.beforeRendering;
  let baseline = fromYearCsv ? (first ? { rowsPerSecond: fromYearCsv.rows / first.seconds, source: 'year-csv, its first request (before rendering)' } : { rowsPerSecond: fromYearCsv.rowsPerSecond, source: 'year-csv' }) : null;
  if (!baseline) {
    log(`concurrent-year-csv: single-extract baseline GET ${path} (year-csv did not run) ...`);
    const single = await measureRequest(server, path, 'csv');
    baseline = { rowsPerSecond: single.rows / (single.wallMs / 1000), source: 'measured first on the same server' };
  }
  log(`concurrent-year-csv: ${CONCURRENT_EXTRACTS} × GET ${path} at once ...`);
  const concurrent = await runConcurrent(server, { path, expectedRows: year.expectedRows, count: CONCURRENT_EXTRACTS, baseline });
  log(`concurrent-year-csv: ${concurrent.wallSeconds.toFixed(2)} s, ${Math.round(concurrent.rowsPerSecond).toLocaleString('en')} rows/s, peak RSS ${concurrent.peakRssMb.toFixed(0)} MB`);
  return concurrent;
}

/**
 * Aborted extracts before RSS "before", as a share of the measured ones: the C heap under DuckDB
 * settles at the high-water mark of concurrent work, which takes a few hundred 28-day extracts
 * (demo year, 8 at a time: 387 MB after 300, then 331 MB after 3,000 more). Growth measured from
 * below that level is the plateau being reached, not a leak.
 */
const ABORT_WARMUP_SHARE = 0.3;

function abortAsk(o: BenchOptions, plan: Plan, keys: readonly string[]) {
  const rowsPerDay = planned(plan, 'year-csv').expectedRows / o.days;
  const windowDays = Math.min(ABORT_WINDOW_DAYS, o.days);
  const maxAbortBytes = Math.round(Math.min(MAX_ABORT_BYTES, Math.max(1024, (rowsPerDay * windowDays * CSV_BYTES_PER_ROW) / 2)));
  return { dataset: hotspots.name, window: fullWindow(o), windowDays, count: o.aborts, warmupCount: Math.max(1, Math.round(o.aborts * ABORT_WARMUP_SHARE)), concurrency: ABORT_CONCURRENCY, maxAbortBytes, keys };
}

/** soak's requests in flight at once; how long it waits for the server to be idle again at most. */
const SOAK_CONCURRENCY = 8;
const SOAK_IDLE_TIMEOUT_MS = 120_000;

/** soak on a fresh server of its own: its memory, descriptors and temp files are its own. */
async function measureSoak(o: BenchOptions, setup: ServerSetup, log: Log): Promise<SoakResult> {
  const checkpoint = Math.max(1, Math.round(o.soakRequests / 10));
  log(`soak: ${o.soakRequests.toLocaleString('en')} mixed requests, ${SOAK_CONCURRENCY} at a time; RSS after ${checkpoint.toLocaleString('en')} and at the end ...`);
  const ask = { dataset: hotspots.name, window: fullWindow(o), requests: o.soakRequests, checkpoint, concurrency: SOAK_CONCURRENCY, keys: setup.keys, tempDir: setup.config.tempDir, idleTimeoutMs: SOAK_IDLE_TIMEOUT_MS };
  const r = (await withServer(setup, o, 'soak', { warm: true }, log, (s) => runSoak(s, ask))).value;
  const state = (x: SoakResult['start']) => `RSS ${x.rssMb.toFixed(0)} MB, heap ${x.heapUsedMb.toFixed(0)} MB, ${x.fds} descriptors (${x.clientConnections} of them clients' connections, ${x.renderingFds} renderings' files), ${x.tempFiles} temp files and ${x.renderingFiles} renderings`;
  log(`soak: start ${state(r.start)}; after ${r.checkpoint.requests.toLocaleString('en')}: ${state(r.checkpoint)}; end ${state(r.end)}`);
  log(`soak: ${r.requests.toLocaleString('en')} requests in ${r.wallSeconds.toFixed(1)} s, statuses ${JSON.stringify(r.statusCounts)}, ${r.hungUp} hung up, idle again: ${r.idleReached} (${(r.idleWaitMs / 1000).toFixed(1)} s)`);
  return r;
}

/** Key registry, then each scenario on its server: cold-first-byte cold, then the shared server's, concurrent-year-csv fresh, aborts fresh. */
export async function measure(o: BenchOptions, plan: Plan, log: Log): Promise<Measured> {
  const only = new Set(o.only);
  const tempDir = await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-'));
  try {
    const rowLimit = Math.max(...plan.specs.map((s) => s.expectedRows)) + 1;
    const setup = await prepareSetup(o, tempDir, rowLimit, log);
    const m: Measured = { extracts: [], load: {}, capacity: {}, shared: null, rateLimitPerMinute: setup.rateLimitPerMinute, loadAverage: { before: os.loadavg(), after: [] } };
    if (m.loadAverage.before[0]! > os.availableParallelism() / 2) log(`note: load average ${m.loadAverage.before[0]!.toFixed(1)} on ${os.availableParallelism()} cores; other work will make the figures noisy`);
    const yearPath = extractPath(planned(plan, 'year-csv'));
    if (only.has('cold-first-byte')) {
      const cold = (await withServer(setup, o, 'cold-first-byte, cold', { warm: false }, log, (s) => measureColdStart(s, yearPath))).value;
      log(`cold-first-byte: first byte of GET ${yearPath} on a fresh server after ${cold.firstByteMs.toFixed(0)} ms`);
      m.load['cold-first-byte'] = cold;
    }
    const shared = SHARED_SERVER.filter((name) => only.has(name));
    if (shared.length > 0) {
      const nodeArgs = o.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', o.cpuProfDir] : [];
      m.shared = await withServer(setup, o, `shared: ${shared.join(' ')}`, { warm: true, nodeArgs }, log, (s) => runShared(s, o, plan, setup, only, log, m));
    }
    if (only.has('small-windows')) m.load['small-windows'] = await measureSmallWindows(o, setup, log);
    if (only.has('concurrent-year-csv')) m.load['concurrent-year-csv'] = (await withServer(setup, o, 'concurrent-year-csv', { warm: true }, log, (s) => runConcurrentYear(s, plan, m, log))).value;
    if (only.has('aborts')) {
      log(`aborts: ${o.aborts} aborted extracts, ${ABORT_CONCURRENCY} at a time ...`);
      const aborts = (await withServer(setup, o, 'aborts', { warm: true }, log, (s) => runAborts(s, abortAsk(o, plan, setup.keys)))).value;
      log(`aborts: busy after ${aborts.busyAfter}, RSS ${aborts.rssBeforeMb.toFixed(0)} -> ${aborts.rssAfterMb.toFixed(0)} MB`);
      m.load.aborts = aborts;
    }
    if (only.has('aggregate')) m.load.aggregate = await measureAggregateScenario(o, setup, log);
    if (only.has('soak')) m.load.soak = await measureSoak(o, setup, log);
    m.capacity = await measureCapacity(o, plan, setup, m.extracts, log);
    m.loadAverage.after = os.loadavg();
    return m;
  } finally {
    await rm(tempDir, { recursive: true, force: true });
  }
}
