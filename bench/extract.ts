// Extraction benchmark (issues #2 and #5): the real server in child processes, measured from
// outside over HTTP, against DuckDB's own COPY of the same ordered rows, plus concurrency, small
// windows, growth and aborts. `npm run bench -- --help` for options and the scenario list.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { hotspots } from '../datasets/hotspots.ts';
import { sensorReadings } from '../datasets/sensor-readings.ts';
import { isArgsError } from '../shared/command-io.ts';
import { aggregateFigures } from './scenarios/aggregate-scenario.ts';
import { ensureDataSet, listParquet, warmPageCache } from './server/data.ts';
import { problemsOf, scenarioFigures } from './measure/figures.ts';
import { capacityFigures, capacityProblems } from './report/figures-capacity.ts';
import { soakFigures, soakProblems } from './report/figures-soak.ts';
import { abortsFigures, coldStartFigures, concurrentFigures, growthFigures, loadProblems, smallWindowsFigures } from './report/figures-load.ts';
import { measure, type Measured } from './report/measure.ts';
import { parseBenchArgs, REPO_ROOT, USAGE, type BenchOptions } from './lib/options.ts';
import { planned, planScenarios, type Plan } from './measure/plan.ts';
import { readServerProfile, renderSelfTimes, topSelfTimes } from './lib/profile.ts';
import { describeMachine, info, renderMachine, renderTable, type Figure } from './measure/table.ts';

const log = (line: string) => process.stdout.write(line + '\n');

async function printProfile(dir: string, pid: number): Promise<void> {
  const profile = await readServerProfile(dir, pid);
  if (!profile) {
    log(`no .cpuprofile found in ${dir}`);
    return;
  }
  log(`\nserver main thread, top self time (V8 CPU profile in ${dir}):\n${renderSelfTimes(topSelfTimes(profile, 15))}`);
}

/** The commit measured, and whether the work tree differed from it: a table is only reproducible with both. */
async function gitState(): Promise<{ commit: string | null; dirty: boolean | null }> {
  const git = (args: string[]) => promisify(execFile)('git', args, { cwd: REPO_ROOT }).then((r) => r.stdout.trim());
  try {
    return { commit: await git(['rev-parse', '--short', 'HEAD']), dirty: (await git(['status', '--porcelain', '--untracked-files=no'])).length > 0 };
  } catch {
    return { commit: null, dirty: null };
  }
}

/** Every figure in the order of the scenarios, then the servers' and the run's own. */
function allFigures(o: BenchOptions, plan: Plan, m: Measured, totalSeconds: number): Figure[] {
  const yearRows = planned(plan, 'year-csv').expectedRows;
  const { 'concurrent-year-csv': concurrent, 'cold-first-byte': cold, 'small-windows': small, 'window-sizes': sizes, aborts, aggregate, soak } = m.load;
  return [
    ...m.extracts.flatMap((r) => scenarioFigures(r, m.extracts)),
    ...(concurrent ? concurrentFigures(concurrent) : []),
    ...(cold ? coldStartFigures(cold) : []),
    ...(small ? smallWindowsFigures(small, { rateLimitPerMinute: m.rateLimitPerMinute, meanFeaturesPerHour: yearRows / (o.days * 24) }) : []),
    ...(sizes ? growthFigures(sizes) : []),
    ...(aborts ? abortsFigures(aborts) : []),
    ...(aggregate ? aggregateFigures(aggregate) : []),
    ...(soak ? soakFigures(soak) : []),
    ...capacityFigures(m.capacity),
    ...(m.shared
      ? [info('server', 'RSS after start, idle (shared server)', m.shared.idleRssMb ?? Number.NaN, 'MB'), info('server', 'VmHWM at end (lifetime peak RSS, same server)', m.shared.vmHwmMb ?? Number.NaN, 'MB')]
      : []),
    info('bench', 'load average (1 min) before the first server', m.loadAverage.before[0] ?? Number.NaN),
    info('bench', 'load average (1 min) after the last scenario', m.loadAverage.after[0] ?? Number.NaN),
    info('bench', 'whole bench wall time', totalSeconds, 's'),
  ];
}

async function run(o: BenchOptions): Promise<number> {
  const started = performance.now();
  const measuredAtUtc = new Date().toISOString();
  // Read before measuring: the code that ran, even if a commit lands while the bench runs.
  const git = await gitState();
  const machine = describeMachine();
  log(renderMachine(machine));
  const data = await ensureDataSet(o, log);
  const plan = await planScenarios(o, log);
  const files = [...(await listParquet(o.dataDir, hotspots.name)), ...(await listParquet(o.dataDir, sensorReadings.name))];
  log(`page cache: read ${((await warmPageCache(files)) / 1e6).toFixed(1)} MB of Parquet (${files.length} files) once before any timing`);
  const m = await measure(o, plan, log);

  const totalSeconds = (performance.now() - started) / 1000;
  const figures = allFigures(o, plan, m, totalSeconds);
  const loadText = (l: number[]) => l.map((v) => v.toFixed(2)).join(' ');
  log('\n' + renderMachine(machine));
  log(`load averages (1, 5, 15 min): ${loadText(m.loadAverage.before)} before, ${loadText(m.loadAverage.after)} after`);
  log(`code: ${git.commit ?? 'unknown commit'}${git.dirty ? ' with uncommitted changes' : ''}; scenarios ${o.only.join(',')}`);
  log(`data: ${o.dataDir} (scale ${o.scale}, ${o.days} days before ${o.end}, seed ${o.seed}; ${data.generatedSeconds === null ? 'reused' : `generated in ${data.generatedSeconds.toFixed(1)} s`})`);
  if (m.shared) log(`warm-up before measuring: ${m.shared.warmup.map((w) => w.path).join(', ')}`);
  log('* = a figure of the performance table (bench/readme-table.ts)\n');
  log(renderTable(figures));
  if (o.cpuProfDir) log('note: the shared server ran under --cpu-prof; its figures include the profiler\'s overhead');
  const problems = [...problemsOf(m.extracts), ...loadProblems(m.load), ...soakProblems(m.load.soak), ...capacityProblems(m.capacity)];
  if (o.jsonPath) {
    const scenarios = { ...Object.fromEntries(m.extracts.map((r) => [r.name, r])), ...m.load, ...m.capacity };
    const report = { measuredAtUtc, machine, git, options: o, data, warmup: m.shared?.warmup ?? [], scenarios, figures, vmHwmMb: m.shared?.vmHwmMb ?? null, idleRssMb: m.shared?.idleRssMb ?? null, load: m.loadAverage, totalSeconds, problems };
    await writeFile(o.jsonPath, JSON.stringify(report, null, 2) + '\n');
    log(`\nJSON: ${o.jsonPath}`);
  }
  if (o.cpuProfDir && m.shared) await printProfile(o.cpuProfDir, m.shared.pid);
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
    const usage = isArgsError(e);
    process.stderr.write(`bench: ${usage ? (e as Error).message + '\n' + USAGE : ((e as Error).stack ?? String(e))}\n`);
    return usage ? 2 : 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
