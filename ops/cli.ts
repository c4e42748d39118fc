import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DemoOptions } from '../demo/plans/demo-plans.ts';
import { DATASETS } from '../datasets/index.ts';
import { ConfigError, loadConfig, type Config } from '../server/config.ts';
import { isArgsError, UsageError } from '../shared/command-io.ts';
import { demoKey } from './demo-key.ts';
import { KEYS_USAGE, keysCommand } from './keys.ts';

const USAGE = `Usage: fire-api <command> [options]

Commands:
  serve                      Start the server (configuration from the environment: DATA_DIR, PORT, HOST, ROW_LIMIT, ...)
  start                      Write demo data into DATA_DIR if it holds no dataset, then serve
  demo-data --out DIR        Write a deterministic demo data set
            [--end YYYY-MM-DD] exclusive last day (default: today, UTC)
            [--days N]         number of days before --end (default 30)
            [--seed N]         random seed (default 1)
            [--scale X]        volume multiplier for benchmarks (default 1)
  extract <dataset> --from A --to B --out FILE [...]   Walk a window into one file + FILE.manifest.json (extract --help)
  verify FILE.manifest.json  Re-request every window of an extract; exit 0 only when all are identical
                             (extract and verify are the client program in client/: HTTP only, any server)
  check [--data-dir DIR] [--dataset NAME] [--json]
                             Check every data file as the server does; exit 0 when all are servable,
                             1 when any fails, 2 on usage errors (DATA_DIR when --data-dir is not given)
  ingest <dataset> FILE...   Write source files (FIRMS CSV, EFFIS GeoJSON/shapefile, CSV) into DATA_DIR (ingest --help)
  compact <dataset>          Rewrite partitions of several files as one sorted file each, beside a live server (compact --help)
${KEYS_USAGE}
                             (registry: KEYS_FILE, default var/keys.json)
  help                       Show this text
`;

const out = (text: string) => process.stdout.write(text + '\n');
const err = (text: string) => process.stderr.write(text + '\n');

const todayUtc = () => new Date().toISOString().slice(0, 10);

async function demoData(args: string[], fallbackOut?: string): Promise<void> {
  const { values } = parseArgs({ args, options: { out: { type: 'string' }, end: { type: 'string' }, days: { type: 'string' }, seed: { type: 'string' }, scale: { type: 'string' } } });
  const outDir = values.out ?? fallbackOut;
  if (!outDir) throw new UsageError('demo-data needs --out DIR');
  const candidate = {
    end: values.end ?? todayUtc(),
    days: values.days === undefined ? 30 : Number(values.days),
    seed: values.seed === undefined ? 1 : Number(values.seed),
    scale: values.scale === undefined ? 1 : Number(values.scale),
  };
  const parsed = DemoOptions.safeParse(candidate);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('; '));
  const opts = { outDir: path.resolve(outDir), ...parsed.data };
  err(`writing demo data: ${opts.days} days before ${opts.end}, seed ${opts.seed}, scale ${opts.scale} -> ${opts.outDir}`);
  const started = Date.now();
  // Loaded on demand: `keys` and `help` should start fast, without the engine.
  const { writeDemoData } = await import('../demo/write-demo-data.ts');
  await writeDemoData(opts, (message) => err(`  ${message}`));
  err(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** `serve`, or `start`: demo data when DATA_DIR holds no dataset and a demo key, then serve and say how to try it. */
async function serveCommand(start: boolean): Promise<void> {
  const config = loadConfig();
  if (start && !DATASETS.some((d) => existsSync(path.join(config.dataDir, d.name)))) await demoData([], config.dataDir);
  const key = start ? await demoKey(config.keysFile) : null;
  // Loaded on demand, like the demo writer: the other commands start without the service.
  const { serve } = await import('../server/serve.ts');
  await serve(config);
  if (key) printWelcome(config, key.key, key.issued);
}

function printWelcome(config: Config, key: string, issued: boolean): void {
  const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  const h = `-H "Authorization: Bearer $FIRE_API_KEY"`;
  out(`\nResearch Read API on ${base} serving ${config.dataDir}`);
  out(`Demo key (${issued ? 'new' : 'reused'}, valid 365 days, registry ${config.keysFile}):\n`);
  out(`  export FIRE_API_KEY=${key}\n`);
  out('Try:');
  out(`  curl ${h} '${base}/api/v1/hotspots'                      # last 24 h of detections, GeoJSON`);
  out(`  curl ${h} '${base}/api/v1/hotspots?format=csv&country=PT' # as CSV, Portugal only`);
  out(`  curl ${h} '${base}/api/v1/fire-danger?level=adminArea'    # FWI series, default model`);
  out(`  curl ${h} '${base}/api/v1/sensor-readings?format=csv'`);
  out(`  curl ${h} '${base}/api/v1/hotspots/aggregate?from=${monthAgo()}&groupBy=country&stats=frp.sum&format=csv' # daily counts and FRP per country`);
  out(`  ${base}/api/v1/explore   # the explorer: open it in a browser, choose a window and a box, see the count, download`);
  out(`  ${base}/api/v1/ogc   # OGC API - Features: open it in a browser, or add it in QGIS (the key as a Basic password)`);
  out(`  curl '${base}/readyz'                                       # dataset availability, no key\n`);
}

/** The day 30 days ago: the demo data's first day, so the aggregate example has something to count. */
const monthAgo = () => new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === 'demo-data') return demoData(rest);
  if (command === 'keys') return keysCommand(loadConfig().keysFile, rest);
  if (command === 'ingest') return void (process.exitCode = await (await import('./ingest/ingest-command.ts')).ingestCommand(rest, process.env));
  if (command === 'compact') return void (process.exitCode = await (await import('./compact-command.ts')).compactCommand(rest, process.env));
  if (command === 'check') {
    const { checkCommand } = await import('./check.ts');
    return void (process.exitCode = await checkCommand(rest, () => loadConfig().dataDir, out));
  }
  if (command === 'serve' || command === 'start') return serveCommand(command === 'start');
  if (command === undefined || command === 'help' || command === '--help') return void out(USAGE);
  throw new UsageError(`unknown command '${command}'`);
}

main(process.argv.slice(2)).catch((e: unknown) => {
  if (isArgsError(e) || e instanceof ConfigError) {
    err(`fire-api: ${e.message}`);
    if (!(e instanceof ConfigError)) err(USAGE);
    process.exit(2);
  }
  err(`fire-api: ${(e as Error).stack ?? String(e)}`);
  process.exit(1);
});
