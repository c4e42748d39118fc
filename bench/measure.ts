import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { hotspots } from '../datasets/hotspots.ts';
import { runAborts, type AbortsResult } from './aborts.ts';
import { measureCapacity, type CapacityMeasured } from './capacity.ts';
import { measureColdStart, type ColdStartResult } from './cold-start.ts';
import { runConcurrent, type ConcurrentResult } from './concurrent.ts';
import { REFERENCE_THREADS } from './reference.ts';
import { runGrowth, type GrowthResult } from './growth.ts';
import { fullWindow, type BenchOptions, type ScenarioId } from './options.ts';
import type { Plan } from './plan.ts';
import { extractPath, measureRequest, runScenario, type ScenarioResult, type ScenarioSpec } from './scenario.ts';
import type { ServerProcess } from './server-process.ts';
import { prepareSetup, withServer, type ServerSetup, type Session } from './session.ts';
import { runSmallWindows, type SmallWindowsResult } from './small-windows.ts';

type Log = (line: string) => void;

/** Row 4's extracts started together; row 6's connections; row 8's in-flight aborts. */
const CONCURRENT_EXTRACTS = 4;
const SMALL_WINDOW_CONNECTIONS = 50;
const ABORT_CONCURRENCY = 8;
const ABORT_WINDOW_DAYS = 28;
/** CSV is ~150 bytes a hotspot row, GeoJSON more: half a window's CSV is mid-stream in either format. */
const CSV_BYTES_PER_ROW = 150;
const MAX_ABORT_BYTES = 8 * 1024 * 1024;

export interface Measured {
  extracts: ScenarioResult[];
  D?: ConcurrentResult;
  E?: ColdStartResult;
  F?: SmallWindowsResult;
  G?: GrowthResult;
  H?: AbortsResult;
  /** Issue #11's slow readers, overload and throttled year download (I, J, K). */
  capacity: CapacityMeasured;
  /** The server that ran A, B, C, G and F (null when none of them ran). */
  main: Session<unknown> | null;
  rateLimitPerMinute: number;
  /** os.loadavg() before the first server and after the last: other work on the machine shows here. */
  load: { before: number[]; after: number[] };
}

const spec = (plan: Plan, id: string): ScenarioSpec => plan.specs.find((s) => s.id === id)!;

/** A, B, C (each against DuckDB's COPY), then G and F, on one server; A runs first, so its peak RSS is its own. */
async function runMain(server: ServerProcess, o: BenchOptions, plan: Plan, setup: ServerSetup, only: Set<ScenarioId>, log: Log, m: Measured): Promise<void> {
  for (const s of plan.specs.filter((s) => only.has(s.id as ScenarioId))) {
    log(`${s.id}: GET ${extractPath(s)} (${s.title}) ...`);
    // The reference is DuckDB at its fastest here: one statement on every core (its own default), not
    // the server's one thread per statement, which would make the server's ratio look better than it is.
    const r = await runScenario(server, s, { dataDir: o.dataDir, threads: REFERENCE_THREADS, memoryLimit: setup.config.duckdbMemoryLimit });
    const times = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ');
    log(`${s.id}: server ${times(r.serverRunsSeconds)} s, ${r.rows.toLocaleString('en')} rows; DuckDB COPY ${times(r.referenceRunsSeconds)} s (best of each compared)`);
    m.extracts.push(r);
  }
  if (only.has('G')) {
    log('G: 1-day, 1-month, 1-year hotspot CSV windows ...');
    const [a, b] = [spec(plan, 'A'), spec(plan, 'B')];
    m.G = await runGrowth(server, hotspots.name, [
      { label: 'day', window: plan.day.window, expectedRows: plan.day.rows, repeats: 5 },
      { label: 'month', window: b.window, expectedRows: b.expectedRows, repeats: 3 },
      { label: 'year', window: a.window, expectedRows: a.expectedRows, repeats: 1 },
    ]);
    log(`G: ${m.G.windows.map((w) => `${w.label} ${Math.round(w.rowsPerSecond).toLocaleString('en')} rows/s`).join(', ')}`);
  }
  if (only.has('F')) {
    log(`F: ${SMALL_WINDOW_CONNECTIONS} connections, ${o.smallSeconds} s of 1-hour GeoJSON windows (autocannon) ...`);
    m.F = await runSmallWindows(server, { dataset: hotspots.name, window: fullWindow(o), connections: SMALL_WINDOW_CONNECTIONS, seconds: o.smallSeconds, keys: setup.keys });
    log(`F: ${m.F.requestsPerSecond.toFixed(0)} req/s, p99 ${m.F.latencyP99Ms} ms, statuses ${JSON.stringify(m.F.statusCounts)}`);
  }
}

/** D on a fresh server: row 1's rows/s comes from A when it ran, else from one extract measured here first. */
async function runD(server: ServerProcess, plan: Plan, m: Measured, log: Log): Promise<ConcurrentResult> {
  const a = spec(plan, 'A');
  const path = extractPath(a);
  const fromA = m.extracts.find((r) => r.id === 'A');
  let baseline = fromA ? { rowsPerSecond: fromA.rowsPerSecond, source: 'A' } : null;
  if (!baseline) {
    log(`D: single-extract baseline GET ${path} (A did not run) ...`);
    const single = await measureRequest(server, path, 'csv');
    baseline = { rowsPerSecond: single.rows / (single.wallMs / 1000), source: 'measured in D first' };
  }
  log(`D: ${CONCURRENT_EXTRACTS} × GET ${path} at once ...`);
  const d = await runConcurrent(server, { path, expectedRows: a.expectedRows, count: CONCURRENT_EXTRACTS, baseline });
  log(`D: ${d.wallSeconds.toFixed(2)} s, ${Math.round(d.rowsPerSecond).toLocaleString('en')} rows/s, peak RSS ${d.peakRssMb.toFixed(0)} MB`);
  return d;
}

/**
 * Aborted extracts before RSS "before", as a share of the measured ones: the C heap under DuckDB
 * settles at the high-water mark of concurrent work, which takes a few hundred 28-day extracts
 * (demo year, 8 at a time: 387 MB after 300, then 331 MB after 3,000 more). Growth measured from
 * below that level is the plateau being reached, not a leak.
 */
const ABORT_WARMUP_SHARE = 0.3;

function abortAsk(o: BenchOptions, plan: Plan, keys: readonly string[]) {
  const rowsPerDay = spec(plan, 'A').expectedRows / o.days;
  const windowDays = Math.min(ABORT_WINDOW_DAYS, o.days);
  const maxAbortBytes = Math.round(Math.min(MAX_ABORT_BYTES, Math.max(1024, (rowsPerDay * windowDays * CSV_BYTES_PER_ROW) / 2)));
  return { dataset: hotspots.name, window: fullWindow(o), windowDays, count: o.aborts, warmupCount: Math.max(1, Math.round(o.aborts * ABORT_WARMUP_SHARE)), concurrency: ABORT_CONCURRENCY, maxAbortBytes, keys };
}

/** Key registry, then each scenario on its server: E cold, then A B C G F together, D fresh, H fresh. */
export async function measure(o: BenchOptions, plan: Plan, log: Log): Promise<Measured> {
  const only = new Set(o.only);
  const tempDir = await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-'));
  try {
    const rowLimit = Math.max(...plan.specs.map((s) => s.expectedRows)) + 1;
    const setup = await prepareSetup(o, tempDir, rowLimit, log);
    const m: Measured = { extracts: [], capacity: {}, main: null, rateLimitPerMinute: setup.rateLimitPerMinute, load: { before: os.loadavg(), after: [] } };
    if (m.load.before[0]! > os.availableParallelism() / 2) log(`note: load average ${m.load.before[0]!.toFixed(1)} on ${os.availableParallelism()} cores; other work will make the figures noisy`);
    const yearPath = extractPath(spec(plan, 'A'));
    if (only.has('E')) m.E = (await withServer(setup, o, 'E, cold', { warm: false }, log, (s) => measureColdStart(s, yearPath))).value;
    if (m.E) log(`E: first byte of GET ${yearPath} on a fresh server after ${m.E.firstByteMs.toFixed(0)} ms`);
    if (['A', 'B', 'C', 'F', 'G', 'L', 'M'].some((id) => only.has(id as ScenarioId))) {
      const nodeArgs = o.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', o.cpuProfDir] : [];
      m.main = await withServer(setup, o, 'A B C G F', { warm: true, nodeArgs }, log, (s) => runMain(s, o, plan, setup, only, log, m));
    }
    if (only.has('D')) m.D = (await withServer(setup, o, 'D', { warm: true }, log, (s) => runD(s, plan, m, log))).value;
    if (only.has('H')) {
      log(`H: ${o.aborts} aborted extracts, ${ABORT_CONCURRENCY} at a time ...`);
      m.H = (await withServer(setup, o, 'H', { warm: true }, log, (s) => runAborts(s, abortAsk(o, plan, setup.keys)))).value;
      log(`H: busy after ${m.H.busyAfter}, RSS ${m.H.rssBeforeMb.toFixed(0)} -> ${m.H.rssAfterMb.toFixed(0)} MB`);
    }
    m.capacity = await measureCapacity(o, plan, setup, m.extracts, log);
    m.load.after = os.loadavg();
    return m;
  } finally {
    await rm(tempDir, { recursive: true, force: true });
  }
}
