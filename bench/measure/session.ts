import path from 'node:path';
import { hotspots } from '../../datasets/hotspots.ts';
import { sensorReadings } from '../../datasets/sensor-readings.ts';
import { loadConfig, type Config } from '../../server/config.ts';
import { issueBenchKeys } from '../server/bench-key.ts';
import { TARGETS } from './figures.ts';
import { firstDayWindow, type BenchOptions } from '../lib/options.ts';
import { readStatusMb } from '../server/rss.ts';
import { extractPath, measureRequest } from './scenario.ts';
import { waitForQuiet } from '../server/server-metrics.ts';
import { freePort, startServer, type ServerProcess } from '../server/server-process.ts';

/** What every server of one bench run shares: data, temp folder, key registry, limits. */
export interface ServerSetup {
  /** The environment without PORT: each server gets a fresh port. */
  env: Record<string, string>;
  /** The server's own parse of `env` (the reference COPY takes its memory limit). */
  config: Config;
  /** Keys in the registry; the first one is every single-client scenario's. */
  keys: string[];
  /** The per-key limit the servers run with, and why it is not the default. */
  rateLimitPerMinute: number;
}

/**
 * small-windows needs ≥ 1,000 req/s; with one key per connection, 50 keys × 120/min is 100 req/s.
 * The limit is raised to ten times what the target needs, so it is never what small-windows
 * measures, and the table says so. The keys are still many, so the limiter keeps one counter per client.
 */
export const raisedRateLimit = (keys: number): number => Math.ceil((10 * TARGETS['small-windows'].minRequestsPerSecond * 60) / keys);

export async function prepareSetup(o: BenchOptions, tempDir: string, rowLimit: number, log: (line: string) => void): Promise<ServerSetup> {
  const rateLimitPerMinute = raisedRateLimit(o.keys);
  const env = {
    DATA_DIR: o.dataDir,
    // Side by side, not nested: DuckDB may write under TEMP_DIR, which must not hold the registry.
    TEMP_DIR: path.join(tempDir, 'duckdb'),
    KEYS_FILE: path.join(tempDir, 'keys', 'keys.json'),
    HOST: '127.0.0.1',
    // Above every window's count, so no scenario is truncated and each response is the whole window.
    ROW_LIMIT: String(rowLimit),
    // A timeout is not what is measured; the default would cut a slow run short.
    QUERY_TIMEOUT_MS: String(3_600_000),
    RATE_LIMIT_PER_MINUTE: String(rateLimitPerMinute),
    // Files present at start are rendered in the background only on small-windows' own server (which
    // waits for them): on the others they would share the cores with what is measured, the DuckDB
    // references included, and the year's first request would no longer be one before rendering.
    RENDER_AT_START: 'false',
    LOG_LEVEL: 'warn',
  };
  // Parsed first: a configuration the server would refuse should stop the bench before the keys.
  const config = loadConfig({ ...process.env, ...env });
  const started = performance.now();
  const keys = await issueBenchKeys(env.KEYS_FILE, o.keys);
  log(`keys: ${keys.length} issued with \`fire-api keys issue\` in ${((performance.now() - started) / 1000).toFixed(1)} s; RATE_LIMIT_PER_MINUTE ${rateLimitPerMinute} per key (default 120)`);
  return { env, config, keys, rateLimitPerMinute };
}

export const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

export interface WarmUpRun {
  path: string;
  ms: number;
  rows: number;
}

/** Warm-up: one small window per dataset, so the server's JIT, connections and those files' checks are warm. */
export async function warmUp(server: ServerProcess, o: BenchOptions, log: (line: string) => void): Promise<WarmUpRun[]> {
  const day = firstDayWindow(o);
  const out = [];
  for (const d of [hotspots, sensorReadings]) {
    const p = extractPath({ dataset: d.name, window: day, format: 'csv' });
    const run = await measureRequest(server, p, 'csv');
    if (!run.complete || run.rows !== run.returnedHeader) throw new Error(`warm-up ${p} failed: status ${run.status}, ${run.rows} rows, X-Returned ${run.returnedHeader}`);
    log(`warm-up: GET ${p} -> ${run.rows} rows in ${run.wallMs.toFixed(0)} ms`);
    out.push({ path: p, ms: run.wallMs, rows: run.rows });
  }
  return out;
}

export interface Session<T> {
  value: T;
  pid: number;
  warmup: WarmUpRun[];
  idleRssMb: number | null;
  /** The kernel's high-water mark of the server's RSS over its whole life. */
  vmHwmMb: number | null;
}

/**
 * A fresh server child for `fn`, stopped whatever happened. Unless `warm` is false: warmed up,
 * then given time to finish its own start-up work (background file checks) before `fn` measures.
 * Scenarios that judge memory get their own server, so what an earlier scenario left in the
 * heap cannot pass for theirs.
 */
export async function withServer<T>(
  setup: ServerSetup,
  o: BenchOptions,
  label: string,
  options: { warm: boolean; nodeArgs?: readonly string[] },
  log: (line: string) => void,
  fn: (server: ServerProcess) => Promise<T>,
): Promise<Session<T>> {
  // A cold server is cold: no start-up file checks racing its first request.
  const env = options.warm ? setup.env : { ...setup.env, WARM_FILE_CHECKS: 'false' };
  const server = await startServer({ ...env, PORT: String(await freePort()) }, bearer(setup.keys[0] ?? ''), options.nodeArgs ?? []);
  try {
    log(`server (${label}): pid ${server.pid} on ${server.baseUrl}, DuckDB threads ${setup.config.duckdbThreads}, connections ${setup.config.duckdbConnections}, memory limit ${setup.config.duckdbMemoryLimit}, ROW_LIMIT ${setup.env.ROW_LIMIT}`);
    const idleRssMb = readStatusMb(server.pid, 'VmRSS');
    const warmup = options.warm ? await warmUp(server, o, log) : [];
    if (options.warm) log(`server (${label}): engine quiet (no busy connection for 0.5 s) after ${((await waitForQuiet(server.baseUrl)) / 1000).toFixed(1)} s`);
    const value = await fn(server);
    // A server that died after its last response (e.g. while the reference ran) is broken too.
    server.assertAlive();
    return { value, pid: server.pid, warmup, idleRssMb, vmHwmMb: readStatusMb(server.pid, 'VmHWM') };
  } finally {
    await server.stop();
    if (server.exited && server.exited.code !== 0) log(`server (${label}): stopped with code ${server.exited.code}, signal ${server.exited.signal}`);
  }
}
