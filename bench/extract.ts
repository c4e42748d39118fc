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
import { BenchUsageError, firstDayWindow, fullWindow, monthWindow, parseBenchArgs, USAGE, type BenchOptions, type DayWindow } from './options.ts';
import { readServerProfile, renderSelfTimes, topSelfTimes } from './profile.ts';
import { readStatusMb } from './rss.ts';
import { extractPath, measureRequest, runScenario, type ScenarioResult, type ScenarioSpec } from './scenario.ts';
import { freePort, startServer, type ServerProcess } from './server-process.ts';
import { describeMachine, info, renderMachine, renderTable } from './table.ts';

const log = (line: string) => process.stdout.write(line + '\n');

function spec(id: string, title: string, d: DatasetDescriptor, window: DayWindow, format: 'csv' | 'geojson', expectedRows: number): ScenarioSpec {
  if (!d.time) throw new Error(`${d.name} has no time axis`);
  return { id, title, dataset: d.name, timeColumn: d.time.column, orderBy: d.orderBy, window, format, expectedRows };
}

async function planScenarios(o: BenchOptions): Promise<ScenarioSpec[]> {
  const year = fullWindow(o);
  const month = monthWindow(o);
  const [a, b, c] = await countRows(o.dataDir, [
    { dataset: hotspots.name, column: 'acquiredAtUtc', window: year },
    { dataset: hotspots.name, column: 'acquiredAtUtc', window: month },
    { dataset: sensorReadings.name, column: 'measuredAtUtc', window: year },
  ]);
  log(`rows (DuckDB count): hotspots ${year.from}..${year.to}: ${a!.toLocaleString('en')}; ${month.from}..${month.to}: ${b!.toLocaleString('en')}; sensor-readings ${year.from}..${year.to}: ${c!.toLocaleString('en')}`);
  return [
    spec('A', 'hotspots, whole window, CSV', hotspots, year, 'csv', a!),
    spec('B', 'hotspots, one month, GeoJSON', hotspots, month, 'geojson', b!),
    spec('C', 'sensor-readings, whole window, CSV', sensorReadings, year, 'csv', c!),
  ];
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
  serverPid: number;
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
    return { warmup, results, vmHwmMb: readStatusMb(server.pid, 'VmHWM'), serverPid: server.pid };
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
  const { warmup, results, vmHwmMb, serverPid } = await measure(o, specs);

  const [a, b, c] = results as [ScenarioResult, ScenarioResult, ScenarioResult];
  const totalSeconds = (performance.now() - started) / 1000;
  const figures = [
    ...scenarioFigures(a, b, c),
    info('server', 'VmHWM at end (lifetime peak RSS)', vmHwmMb ?? Number.NaN, 'MB'),
    info('bench', 'whole bench wall time', totalSeconds, 's'),
  ];
  log('\n' + renderMachine(machine));
  log(`data: ${o.dataDir} (scale ${o.scale}, ${o.days} days before ${o.end}, seed ${o.seed}; ${data.generatedSeconds === null ? 'reused' : `generated in ${data.generatedSeconds.toFixed(1)} s`})`);
  log(`warm-up before measuring: ${warmup.map((w) => w.path).join(', ')}\n`);
  log(renderTable(figures));
  const problems = problemsOf(results);
  if (o.jsonPath) {
    const report = { machine, options: o, data, warmup, scenarios: Object.fromEntries(results.map((r) => [r.id, r])), figures, vmHwmMb, totalSeconds, problems };
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
