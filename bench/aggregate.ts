/**
 * The `aggregate` scenario of the bench on its own (aggregate-scenario.ts): the real server over
 * DATA_DIR (default var/bench-data/scale-10; make it with `fire-api demo-data` or one `npm run
 * bench`), figures printed as the bench's table: cold on a server without the aggregate cache,
 * then repeats on one with it. `npm run bench -- --only aggregate` runs the same scenario inside
 * the whole bench.
 *
 *   node --import tsx bench/aggregate.ts [--data-dir DIR] [--year 2025] [--runs 3]
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AGGREGATE_CASES, AGGREGATE_COLD_ENV, AGGREGATE_REPEAT_ENV, aggregateFigures, measureAggregates } from './scenarios/aggregate-scenario.ts';
import { measureRepeats } from './scenarios/aggregate-repeat.ts';
import { issueBenchKey } from './server/bench-key.ts';
import { REPO_ROOT } from './lib/options.ts';
import { freePort, startServer } from './server/server-process.ts';
import { waitForQuiet } from './server/server-metrics.ts';
import { describeMachine, renderMachine, renderTable } from './measure/table.ts';

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, year: { type: 'string' }, runs: { type: 'string' } } });
const dataDir = path.resolve(values['data-dir'] ?? path.join(REPO_ROOT, 'var/bench-data/scale-10'));
const year = Number(values.year ?? 2025);
const runs = Number(values.runs ?? 3);
const log = (line: string) => process.stdout.write(line + '\n');

const keysFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-keys-')), 'keys.json');
const key = await issueBenchKey(keysFile);
// No renderings of the files present at start: they would share the cores with what is measured (as in the whole bench).
const env = { DATA_DIR: dataDir, KEYS_FILE: keysFile, HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000', ROW_LIMIT: '100000000', QUERY_TIMEOUT_MS: '3600000', RENDER_AT_START: 'false' };
const yearWindow = { from: `${year}-01-01`, to: `${year + 1}-01-01` };
log(renderMachine(describeMachine()));
log(`DATA_DIR ${dataDir}; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} before; best of ${runs}`);
/** A started server once its start-up file checks are over (the files' facts are theirs to find) and DuckDB is idle, as the whole bench's servers are. */
async function warmServer(extra: Record<string, string>, label: string) {
  const server = await startServer({ ...env, ...extra, PORT: String(await freePort()) }, { authorization: `Bearer ${key}` });
  log(`server (${label}): start-up checks over, engine quiet after ${((await waitForQuiet(server.baseUrl)) / 1000).toFixed(1)} s`);
  return server;
}
const cold = await warmServer(AGGREGATE_COLD_ENV, 'cold');
const r = await measureAggregates(cold, dataDir, yearWindow, runs, log).finally(() => cold.stop());
const cached = await warmServer(AGGREGATE_REPEAT_ENV, 'repeat');
r.repeats = await measureRepeats(cached, AGGREGATE_CASES, yearWindow, runs, log).finally(() => cached.stop());
log(`load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} after\n`);
log(renderTable(aggregateFigures(r)));
