/**
 * `fire-api extract` end to end, per output format: the client walks a window through the row cap
 * against a real server process and writes one file plus its manifest. CSV is the reference; the
 * Parquet file is then read back by DuckDB (row count and ids in the CSV file's order) so a fast
 * run that wrote the wrong rows cannot pass. Uses the demo data in DATA_DIR (default
 * var/bench-data/scale-10, written by `npm run bench`).
 *
 *   node --import tsx bench/extract-client.ts [--data-dir DIR] [--from 2025-07-01 --to 2025-10-01] [--row-limit 100000] [--runs 2]
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { extractCommand } from '../client/extract.ts';
import { readManifest } from '../client/manifest.ts';
import { issueBenchKey } from './server/bench-key.ts';
import { REPO_ROOT } from './lib/options.ts';
import { freePort, startServer } from './server/server-process.ts';

const { values } = parseArgs({
  options: { 'data-dir': { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, 'row-limit': { type: 'string' }, runs: { type: 'string' } },
});
const dataDir = path.resolve(values['data-dir'] ?? path.join(REPO_ROOT, 'var/bench-data/scale-10'));
const from = values.from ?? '2025-07-01';
const to = values.to ?? '2025-10-01';
const rowLimit = values['row-limit'] ?? '100000';
const runs = Number(values.runs ?? 2);
const FORMATS = ['csv', 'parquet', 'geojson'] as const;

interface Run {
  ms: number;
  rows: number;
  pages: number;
  bytes: number;
}

const silent = { stdout: { write: () => undefined }, stderr: { write: (t: string) => void process.stderr.write(t) }, stderrIsTTY: false };

const work = await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-extract-'));
const keysFile = path.join(work, 'keys.json');
const key = await issueBenchKey(keysFile);
const port = await freePort();
const server = await startServer(
  { DATA_DIR: dataDir, KEYS_FILE: keysFile, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ROW_LIMIT: rowLimit, RATE_LIMIT_PER_MINUTE: '100000' },
  { authorization: `Bearer ${key}` },
);

async function extractOnce(format: (typeof FORMATS)[number], out: string): Promise<Run> {
  await rm(out, { force: true });
  const args = ['hotspots', '--from', from, '--to', to, '--format', format, '--out', out, '--base-url', server.baseUrl, '--key', key, '--force', '--restart'];
  const start = performance.now();
  const code = await extractCommand(args, {}, silent);
  const ms = performance.now() - start;
  if (code !== 0) throw new Error(`extract --format ${format} exited ${code}`);
  const m = await readManifest(`${out}.manifest.json`);
  return { ms, rows: m.rows, pages: m.pages.length, bytes: (await stat(out)).size };
}

/** The Parquet file's rows are the CSV file's: same count, same ids in the same order. */
async function sameRows(parquet: string, csv: string): Promise<void> {
  // One thread: row_number() OVER () then numbers the rows in file order.
  const c = await (await DuckDBInstance.create(':memory:', { threads: '1' })).connect();
  try {
    const sql = `WITH p AS (SELECT id, row_number() OVER () AS n FROM read_parquet('${parquet}')),
      v AS (SELECT id, row_number() OVER () AS n FROM read_csv('${csv}', all_varchar = true))
      SELECT count(*) FILTER (WHERE p.id IS DISTINCT FROM v.id)::BIGINT, count(p.id)::BIGINT, count(v.id)::BIGINT FROM p FULL JOIN v USING (n)`;
    const [differ, p, v] = (await c.runAndReadAll(sql)).getRows()[0] as bigint[];
    if (differ !== 0n || p !== v) throw new Error(`the Parquet extract is not the CSV extract's rows: ${p} vs ${v} rows, ${differ} differ`);
  } finally {
    c.closeSync();
  }
}

try {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  console.log(`extract hotspots ${from}..${to}, ROW_LIMIT ${rowLimit}, DATA_DIR ${dataDir}`);
  console.log(`${cpu}, ${os.availableParallelism()} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; best of ${runs}`);
  const best: Partial<Record<(typeof FORMATS)[number], Run>> = {};
  for (let i = 0; i < runs; i++) {
    for (const format of FORMATS) {
      const r = await extractOnce(format, path.join(work, `extract.${format}`));
      if (!best[format] || r.ms < best[format].ms) best[format] = r;
    }
  }
  await sameRows(path.join(work, 'extract.parquet'), path.join(work, 'extract.csv'));
  const csv = best.csv!;
  console.log('format      rows      pages   file MB   bytes/row   seconds   ÷ CSV time   ÷ CSV bytes');
  for (const format of FORMATS) {
    const r = best[format]!;
    if (r.rows !== csv.rows) throw new Error(`${format}: ${r.rows} rows, CSV ${csv.rows}`);
    const cells = [
      format.padEnd(8),
      String(r.rows).padStart(9),
      String(r.pages).padStart(8),
      (r.bytes / 1e6).toFixed(1).padStart(9),
      (r.bytes / r.rows).toFixed(1).padStart(11),
      (r.ms / 1000).toFixed(2).padStart(9),
      (r.ms / csv.ms).toFixed(2).padStart(12),
      (r.bytes / csv.bytes).toFixed(3).padStart(13),
    ];
    console.log(cells.join(' '));
  }
  console.log(`load after ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; the Parquet file holds the CSV file's rows in its order (DuckDB)`);
} finally {
  await server.stop();
  await rm(work, { recursive: true, force: true });
}
