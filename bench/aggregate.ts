/**
 * The `aggregate` scenario of the bench on its own (aggregate-scenario.ts): the real server over
 * DATA_DIR (default var/bench-data/scale-10; make it with `fire-api demo-data` or one `npm run
 * bench`), figures printed as the bench's table. `npm run bench -- --only aggregate` runs the same
 * scenario inside the whole bench.
 *
 *   node --import tsx bench/aggregate.ts [--data-dir DIR] [--year 2025] [--runs 3]
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AGGREGATE_BENCH_ROW_LIMIT, aggregateFigures, measureAggregates } from './aggregate-scenario.ts';
import { issueBenchKey } from './bench-key.ts';
import { REPO_ROOT } from './options.ts';
import { freePort, startServer } from './server-process.ts';
import { describeMachine, renderMachine, renderTable } from './table.ts';

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, year: { type: 'string' }, runs: { type: 'string' } } });
const dataDir = path.resolve(values['data-dir'] ?? path.join(REPO_ROOT, 'var/bench-data/scale-10'));
const year = Number(values.year ?? 2025);
const runs = Number(values.runs ?? 3);
const log = (line: string) => process.stdout.write(line + '\n');

const keysFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-keys-')), 'keys.json');
const key = await issueBenchKey(keysFile);
const env = { DATA_DIR: dataDir, KEYS_FILE: keysFile, PORT: String(await freePort()), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000', AGGREGATE_ROW_LIMIT: AGGREGATE_BENCH_ROW_LIMIT, ROW_LIMIT: '100000000', QUERY_TIMEOUT_MS: '3600000' };
const server = await startServer(env, { authorization: `Bearer ${key}` });
try {
  log(renderMachine(describeMachine()));
  log(`DATA_DIR ${dataDir}; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} before; best of ${runs}`);
  const r = await measureAggregates(server, dataDir, { from: `${year}-01-01`, to: `${year + 1}-01-01` }, runs, log);
  log(`load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} after\n`);
  log(renderTable(aggregateFigures(r)));
} finally {
  await server.stop();
}
