// Extract benchmark (issue #2): the real server in a child process, measured from outside over
// HTTP, against DuckDB's own COPY of the same ordered rows. `npm run bench -- --help` for options.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { hotspots } from '../datasets/hotspots.ts';
import { sensorReadings } from '../datasets/sensor-readings.ts';
import type { DatasetDescriptor } from '../datasets/index.ts';
import { loadConfig } from '../server/config.ts';
import { issueBenchKey } from './bench-key.ts';
import { countRows, ensureDataSet, listParquet, warmPageCache } from './data.ts';
import { problemsOf, scenarioFigures } from './figures.ts';
import { BenchUsageError, firstDayWindow, fullWindow, monthWindow, parseBenchArgs, USAGE, type BenchOptions } from './options.ts';
import { readServerProfile, renderSelfTimes, topSelfTimes } from './profile.ts';
import { readStatusMb } from './rss.ts';
import { extractPath, measureRequest, runScenario, type ScenarioResult, type ScenarioSpec } from './scenario.ts';
import { freePort, startServer, type ServerProcess } from './server-process.ts';
import { describeMachine, info, renderMachine, renderTable } from './table.ts';

const log = (line: string) => process.stdout.write(line + '\n');

function timeColumn(d: DatasetDescriptor): string {
  if (!d.time) throw new Error(`${d.name} has no time axis`);
  return d.time.column;
}

/** The three scenarios of issue #2, each with the row count DuckDB finds in its window before the server is asked. */
async function planScenarios(o: BenchOptions): Promise<ScenarioSpec[]> {
  const year = fullWindow(o);
  const plan = [
    { id: 'A', title: 'hotspots, whole window, CSV', d: hotspots, window: year, format: 'csv' as const },
    { id: 'B', title: 'hotspots, one month, GeoJSON', d: hotspots, window: monthWindow(o), format: 'geojson' as const },
    { id: 'C', title: 'sensor-readings, whole window, CSV', d: sensorReadings, window: year, format: 'csv' as const },
  ];
  const counts = await countRows(o.dataDir, plan.map((p) => ({ dataset: p.d.name, column: timeColumn(p.d), window: p.window })));
  return plan.map((p, i) => {
    log(`rows (DuckDB count): ${p.d.name} ${p.window.from}..${p.window.to}: ${counts[i]!.toLocaleString('en')}`);
    const { d, ...rest } = p;
    return { ...rest, dataset: d.name, timeColumn: timeColumn(d), orderBy: d.orderBy, expectedRows: counts[i]! };
  });
}

/** Warm-up: one small window per dataset, so the server's JIT, connections and those files' checks are warm. */
async function warmUp(server: ServerProcess, o: BenchOptions): Promise<{ path: string; ms: number; rows: number }[]> {
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

async function printProfile(dir: string, pid: number): Promise<void> {
  const profile = await readServerProfile(dir, pid);
  if (!profile) {
    log(`no .cpuprofile found in ${dir}`);
    return;
  }
  log(`\nserver main thread, top self time (V8 CPU profile in ${dir}):\n${renderSelfTimes(topSelfTimes(profile, 15))}`);
}

interface Measured {
  warmup: Awaited<ReturnType<typeof warmUp>>;
  results: ScenarioResult[];
  vmHwmMb: number | null;
  idleRssMb: number | null;
  serverPid: number;
  /** 1-minute load averages before the warm-up and after the last scenario: other work on the machine shows here. */
  load: [number, number];
}

/** Key, server child, warm-up, scenarios; the child and its temp folder are gone when this returns, whatever happened. */
async function measure(o: BenchOptions, specs: readonly ScenarioSpec[]): Promise<Measured> {
  const tempDir = await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-'));
  let server: ServerProcess | null = null;
  try {
    const env = {
      DATA_DIR: o.dataDir,
      TEMP_DIR: tempDir,
      KEYS_FILE: path.join(tempDir, 'keys.json'),
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      // Above every window's count, so no scenario is truncated and each response is the whole window.
      ROW_LIMIT: String(Math.max(...specs.map((s) => s.expectedRows)) + 1),
      // A timeout is not what is measured; the default would cut a slow run short.
      QUERY_TIMEOUT_MS: String(3_600_000),
      LOG_LEVEL: 'warn',
    };
    const key = await issueBenchKey(env.KEYS_FILE);
    // The server's own parser: the reference gets exactly the threads and memory limit the server resolves.
    const config = loadConfig({ ...process.env, ...env });
    server = await startServer(env, { authorization: `Bearer ${key}` }, o.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', o.cpuProfDir] : []);
    log(`server: pid ${server.pid} on ${server.baseUrl}, DuckDB threads ${config.duckdbThreads}, memory limit ${config.duckdbMemoryLimit}, ROW_LIMIT ${env.ROW_LIMIT}`);
    const idleRssMb = readStatusMb(server.pid, 'VmRSS');
    const loadBefore = os.loadavg()[0]!;
    if (loadBefore > os.availableParallelism() / 2) log(`note: load average ${loadBefore.toFixed(1)} on ${os.availableParallelism()} cores; other work will make the figures noisy`);
    const warmup = await warmUp(server, o);
    const results: ScenarioResult[] = [];
    for (const s of specs) {
      log(`${s.id}: GET ${extractPath(s)} (${s.title}) ...`);
      const r = await runScenario(server, s, { dataDir: o.dataDir, threads: config.duckdbThreads, memoryLimit: config.duckdbMemoryLimit });
      log(`${s.id}: server ${r.wallSeconds.toFixed(2)} s, ${r.rows.toLocaleString('en')} rows; DuckDB COPY ${r.referenceSeconds.toFixed(2)} s`);
      results.push(r);
    }
    // A server that died after its last response (e.g. while the reference ran) is broken too.
    server.assertAlive();
    const vmHwmMb = readStatusMb(server.pid, 'VmHWM');
    return { warmup, results, vmHwmMb, idleRssMb, serverPid: server.pid, load: [loadBefore, os.loadavg()[0]!] };
  } finally {
    await server?.stop();
    if (server?.exited && server.exited.code !== 0) log(`server: stopped with code ${server.exited.code}, signal ${server.exited.signal}`);
    await rm(tempDir, { recursive: true, force: true });
  }
}

async function run(o: BenchOptions): Promise<number> {
  const started = performance.now();
  const machine = describeMachine();
  log(renderMachine(machine));
  const data = await ensureDataSet(o, log);
  const specs = await planScenarios(o);
  const files = [...(await listParquet(o.dataDir, hotspots.name)), ...(await listParquet(o.dataDir, sensorReadings.name))];
  log(`page cache: read ${((await warmPageCache(files)) / 1e6).toFixed(1)} MB of Parquet (${files.length} files) once before any timing`);
  const { warmup, results, vmHwmMb, idleRssMb, serverPid, load } = await measure(o, specs);

  const [a, b, c] = results as [ScenarioResult, ScenarioResult, ScenarioResult];
  const totalSeconds = (performance.now() - started) / 1000;
  const figures = [
    ...scenarioFigures(a, b, c),
    info('server', 'RSS after start, idle', idleRssMb ?? Number.NaN, 'MB'),
    info('server', 'VmHWM at end (lifetime peak RSS)', vmHwmMb ?? Number.NaN, 'MB'),
    info('bench', 'load average (1 min) before warm-up', load[0]),
    info('bench', 'load average (1 min) after last scenario', load[1]),
    info('bench', 'whole bench wall time', totalSeconds, 's'),
  ];
  log('\n' + renderMachine(machine));
  log(`data: ${o.dataDir} (scale ${o.scale}, ${o.days} days before ${o.end}, seed ${o.seed}; ${data.generatedSeconds === null ? 'reused' : `generated in ${data.generatedSeconds.toFixed(1)} s`})`);
  log(`warm-up before measuring: ${warmup.map((w) => w.path).join(', ')}\n`);
  log(renderTable(figures));
  if (o.cpuProfDir) log('note: the server ran under --cpu-prof; these figures include the profiler\'s overhead');
  const problems = problemsOf(results);
  if (o.jsonPath) {
    const report = { machine, options: o, data, warmup, scenarios: Object.fromEntries(results.map((r) => [r.id, r])), figures, vmHwmMb, idleRssMb, load, totalSeconds, problems };
    await writeFile(o.jsonPath, JSON.stringify(report, null, 2) + '\n');
    log(`\nJSON: ${o.jsonPath}`);
  }
  if (o.cpuProfDir) await printProfile(o.cpuProfDir, serverPid);
  for (const p of problems) log(`BROKEN: ${p}`);
  return problems.length ? 1 : 0;
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    log(USAGE);
    return 0;
  }
  try {
    return await run(parseBenchArgs(argv));
  } catch (e) {
    const usage = e instanceof BenchUsageError || String((e as { code?: unknown }).code ?? '').startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`bench: ${usage ? (e as Error).message + '\n' + USAGE : ((e as Error).stack ?? String(e))}\n`);
    return usage ? 2 : 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
