/**
 * What an aggregate costs (issue 27): each aggregate of the real server, measured over HTTP,
 * beside DuckDB's own GROUP BY over the same files and window in this process with every core
 * (plain sum and avg: the server's sums are exact, see docs/aggregates.md), and beside fetching
 * the same year of hotspots as CSV; the server's peak RSS over all of it. Best of N runs each.
 * Demo data in DATA_DIR (default var/bench-data/scale-10; make it with `fire-api demo-data`).
 *
 *   node --import tsx bench/aggregate.ts [--data-dir DIR] [--year 2025] [--runs 3]
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { issueBenchKey } from './bench-key.ts';
import { listParquet, readParquetSql, windowWhere } from './data.ts';
import { fetchExtract, type HttpRun } from './http-run.ts';
import { REPO_ROOT } from './options.ts';
import { readStatusMb } from './rss.ts';
import { freePort, startServer } from './server-process.ts';

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, year: { type: 'string' }, runs: { type: 'string' } } });
const dataDir = path.resolve(values['data-dir'] ?? path.join(REPO_ROOT, 'var/bench-data/scale-10'));
const year = Number(values.year ?? 2025);
const runs = Number(values.runs ?? 3);
const window = { from: `${year}-01-01`, to: `${year + 1}-01-01` };
const YEAR = `from=${window.from}&to=${window.to}`;
const inYear = (column: string) => windowWhere(column, window);
const dayUs = 86_400_000_000;

const CASES: { name: string; path: string; dataset: string; reference: (files: string) => string }[] = [
  {
    name: 'daily x country, frp.sum, frp.max',
    path: `/api/v1/hotspots/aggregate?${YEAR}&groupBy=country&stats=frp.sum,frp.max&format=csv`,
    dataset: 'hotspots',
    reference: (f) => `SELECT epoch_us("acquiredAtUtc") // ${dayUs} AS d, country, count(*), sum(frp), max(frp) FROM ${f} WHERE ${inYear('acquiredAtUtc')} GROUP BY ALL ORDER BY ALL`,
  },
  {
    name: 'year x 0.25 degree grid',
    path: `/api/v1/hotspots/aggregate?${YEAR}&interval=year&groupBy=grid&cell=0.25&format=csv`,
    dataset: 'hotspots',
    reference: (f) => `SELECT floor((longitude + 180) / 0.25) AS x, floor((latitude + 90) / 0.25) AS y, count(*) FROM ${f} WHERE ${inYear('acquiredAtUtc')} GROUP BY ALL ORDER BY ALL`,
  },
  {
    name: 'hourly x station, means',
    path: `/api/v1/sensor-readings/aggregate?${YEAR}&interval=hour&groupBy=stationId&stats=airTemperatureC.mean,relativeHumidityPct.mean,windSpeedMs.mean&format=csv`,
    dataset: 'sensor-readings',
    reference: (f) => `SELECT epoch_us("measuredAtUtc") // 3600000000 AS h, "stationId", count(*), avg("airTemperatureC"), avg("relativeHumidityPct"), avg("windSpeedMs") FROM ${f} WHERE ${inYear('measuredAtUtc')} GROUP BY ALL ORDER BY ALL`,
  },
];

const best = (xs: number[]) => Math.min(...xs);

/** DuckDB's own GROUP BY, every core, timed around the statement; the groups it found. */
async function reference(sql: string): Promise<{ ms: number[]; groups: number }> {
  const instance = await DuckDBInstance.create(':memory:', { threads: String(os.availableParallelism()) });
  const c = await instance.connect();
  const ms: number[] = [];
  let groups = 0;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    groups = (await c.runAndReadAll(sql)).currentRowCount;
    ms.push(performance.now() - started);
  }
  c.closeSync();
  instance.closeSync();
  return { ms, groups };
}

async function served(baseUrl: string, url: string, headers: Record<string, string>): Promise<HttpRun[]> {
  const out: HttpRun[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await fetchExtract(`${baseUrl}${url}`, 'csv', headers);
    if (r.status !== 200 || r.rows !== r.returnedHeader) throw new Error(`${url}: status ${r.status}, ${r.rows} rows of ${r.returnedHeader}`);
    out.push(r);
  }
  return out;
}

const keysFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-keys-')), 'keys.json');
const key = await issueBenchKey(keysFile);
const server = await startServer(
  // Every group in one response, as DuckDB's GROUP BY gives them all.
  { DATA_DIR: dataDir, KEYS_FILE: keysFile, PORT: String(await freePort()), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000', AGGREGATE_ROW_LIMIT: '10000000' },
  { authorization: `Bearer ${key}` },
);
try {
  console.log(`DATA_DIR ${dataDir}, ${os.availableParallelism()} cores, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; best of ${runs}`);
  const measured: { name: string; groups: number; serverMs: number; referenceMs: number }[] = [];
  for (const c of CASES) {
    const files = readParquetSql(await listParquet(dataDir, c.dataset));
    const ref = await reference(c.reference(files));
    const runs = await served(server.baseUrl, c.path, server.requestHeaders);
    if (runs[0]!.rows !== ref.groups) throw new Error(`${c.name}: the server sent ${runs[0]!.rows} groups, DuckDB found ${ref.groups}`);
    measured.push({ name: c.name, groups: ref.groups, serverMs: best(runs.map((r) => r.wallMs)), referenceMs: best(ref.ms) });
  }
  // The aggregates' own peak, before the year of CSV (an extract) is asked for.
  const peak = readStatusMb(server.pid, 'VmHWM');
  const csv = best((await served(server.baseUrl, `/api/v1/hotspots?${YEAR}&format=csv`, server.requestHeaders)).map((r) => r.wallMs));
  console.log(`hotspots year as CSV: ${csv.toFixed(0)} ms`);
  console.log('case                                  groups   server ms   GROUP BY ms   ÷ GROUP BY   ÷ year CSV');
  for (const m of measured) {
    const cells = [m.name.padEnd(36), String(m.groups).padStart(8), m.serverMs.toFixed(0).padStart(11), m.referenceMs.toFixed(0).padStart(13)];
    console.log([...cells, (m.serverMs / m.referenceMs).toFixed(2).padStart(12), (m.serverMs / csv).toFixed(4).padStart(12)].join(' '));
  }
  console.log(`server peak RSS (VmHWM) over the aggregates: ${peak?.toFixed(0) ?? '?'} MB; after the year of CSV too: ${readStatusMb(server.pid, 'VmHWM')?.toFixed(0) ?? '?'} MB`);
} finally {
  await server.stop();
}
