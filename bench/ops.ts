// Operator commands, measured: `fire-api ingest` of a year of FIRMS CSV (rows/s) and `fire-api
// compact` (seconds per partition), each beside DuckDB's own COPY of the same rows.
//   node --import tsx bench/ops.ts [--scale X] [--work DIR]
// The year is the demo generator's hotspots (scale 1: ~0.5 M rows), written as FIRMS delivers
// them: one VIIRS and one MODIS CSV, acq_time without leading zeros. Each command runs as the
// shipped CLI in a child process, timed from outside.

import { spawn } from 'node:child_process';
import { readdir, rm, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { REPO_ROOT } from './lib/options.ts';
import { describeMachine, info, renderMachine, renderTable, type Figure } from './measure/table.ts';
import { ownChild } from './server/children.ts';

const VIIRS = 'latitude, longitude, bright_ti4, scan, track, acq_date, acq_time, satellite, instrument, confidence, version, bright_ti5, frp, daynight';
const MODIS = 'latitude, longitude, brightness, scan, track, acq_date, acq_time, satellite, instrument, confidence, version, bright_t31, frp, daynight';
const q = (text: string) => `'${text.replaceAll("'", "''")}'`;

function fireApi(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = ownChild(spawn(process.execPath, ['bin/fire-api.js', ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] }));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve((performance.now() - started) / 1000) : reject(new Error(`fire-api ${args[0]} exited ${code}`))));
  });
}

async function withDuck<T>(threads: number, fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:', { threads: String(threads) });
  const c = await instance.connect();
  try {
    await c.run("SET TimeZone = 'UTC'");
    return await fn(c);
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}

/** FIRMS CSVs of the demo year: per instrument, split into `parts` by row so each part is a late batch of every day. */
async function writeFirmsCsv(demoDir: string, outDir: string, parts: number): Promise<{ files: string[][]; rows: number }> {
  const source = `read_parquet(${q(path.join(demoDir, 'hotspots/*/*.parquet'))})`;
  return withDuck(os.availableParallelism(), async (c) => {
    const files: string[][] = [];
    for (let part = 0; part < parts; part++) {
      const batch: string[] = [];
      for (const [instrument, columns] of [['VIIRS', VIIRS], ['MODIS', MODIS]] as const) {
        const file = path.join(outDir, `${instrument.toLowerCase()}-${part + 1}-of-${parts}.csv`);
        const select = columns.replace('acq_time', 'CAST(CAST(acq_time AS INTEGER) AS VARCHAR) AS acq_time');
        await c.run(`COPY (SELECT ${select} FROM ${source} WHERE instrument = '${instrument}' AND hash(id) % ${parts} = ${part} ORDER BY acquiredAtUtc, id) TO ${q(file)} (FORMAT csv, HEADER)`);
        batch.push(file);
      }
      files.push(batch);
    }
    const rows = Number((await c.runAndReadAll(`SELECT count(*) FROM ${source}`)).getRows()[0]![0]);
    return { files, rows };
  });
}

/** DuckDB's COPY of the same CSV rows to Parquet, one file per day, every core. */
async function referenceIngest(files: string[], outDir: string): Promise<number> {
  return withDuck(os.availableParallelism(), async (c) => {
    const started = performance.now();
    await c.run(`COPY (SELECT * FROM read_csv([${files.map(q).join(', ')}], union_by_name = true) ORDER BY acq_date, acq_time) TO ${q(outDir)} (FORMAT parquet, PARTITION_BY (acq_date))`);
    return (performance.now() - started) / 1000;
  });
}

/** DuckDB's COPY of each partition's files into one sorted file, as compaction does, every core; total seconds. */
async function referenceCompact(dataDir: string, outDir: string): Promise<{ seconds: number; partitions: number }> {
  const days = (await readdir(path.join(dataDir, 'hotspots'))).filter((d) => d.startsWith('date='));
  return withDuck(os.availableParallelism(), async (c) => {
    const started = performance.now();
    for (const day of days) await c.run(`COPY (SELECT * FROM read_parquet(${q(path.join(dataDir, 'hotspots', day, '*.parquet'))}) ORDER BY "acquiredAtUtc", id) TO ${q(path.join(outDir, `${day}.parquet`))} (FORMAT parquet)`);
    return { seconds: (performance.now() - started) / 1000, partitions: days.length };
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { scale: { type: 'string', default: '1' }, work: { type: 'string', default: path.join(REPO_ROOT, 'var/bench-ops') } } });
  const work = path.resolve(values.work);
  const demo = path.join(work, `demo-scale-${values.scale}`);
  const load = { before: os.loadavg(), after: [] as number[] };
  await mkdir(work, { recursive: true });
  await fireApi(['demo-data', '--out', demo, '--end', '2026-01-01', '--days', '365', '--scale', values.scale!]);
  const csvDir = path.join(work, 'csv');
  await rm(csvDir, { recursive: true, force: true });
  await mkdir(csvDir, { recursive: true });
  const whole = await writeFirmsCsv(demo, csvDir, 1);
  const halves = await writeFirmsCsv(demo, csvDir, 2);
  const data = path.join(work, 'data');
  await rm(data, { recursive: true, force: true });
  const ingestSeconds = await fireApi(['ingest', 'hotspots', '--data-dir', data, ...whole.files[0]!]);
  await rm(path.join(work, 'ref'), { recursive: true, force: true });
  await mkdir(path.join(work, 'ref'), { recursive: true });
  const refIngestSeconds = await referenceIngest(whole.files[0]!, path.join(work, 'ref/ingest'));
  // Two late batches: every day ends up with two files per batch written.
  await rm(data, { recursive: true, force: true });
  for (const batch of halves.files) await fireApi(['ingest', 'hotspots', '--data-dir', data, ...batch]);
  await mkdir(path.join(work, 'ref/compact'), { recursive: true });
  const refCompact = await referenceCompact(data, path.join(work, 'ref/compact'));
  const compactSeconds = await fireApi(['compact', 'hotspots', '--data-dir', data]);
  load.after = os.loadavg();
  const figures: Figure[] = [
    info('ingest: a year of FIRMS CSV', 'rows', whole.rows),
    info('ingest: a year of FIRMS CSV', 'fire-api ingest rows/s (CLI process, start to exit)', whole.rows / ingestSeconds, 'rows/s'),
    info('ingest: a year of FIRMS CSV', 'DuckDB COPY csv -> parquet per day, rows/s (every core)', whole.rows / refIngestSeconds, 'rows/s'),
    info('ingest: a year of FIRMS CSV', 'ratio fire-api / DuckDB COPY (time)', ingestSeconds / refIngestSeconds),
    info('compact: two files per day', 'partitions', refCompact.partitions),
    info('compact: two files per day', 'fire-api compact s per partition (CLI process, start to exit)', compactSeconds / refCompact.partitions, 's'),
    info('compact: two files per day', 'DuckDB COPY of each partition, sorted, s per partition (every core)', refCompact.seconds / refCompact.partitions, 's'),
    info('compact: two files per day', 'ratio fire-api / DuckDB COPY (time)', compactSeconds / refCompact.seconds),
  ];
  process.stdout.write(`${renderTable(figures)}\n${renderMachine(describeMachine())}\n`);
  process.stdout.write(`load averages (1/5/15 min) ${load.before.map((l) => l.toFixed(2)).join(' / ')} before, ${load.after.map((l) => l.toFixed(2)).join(' / ')} after\n`);
}

main().catch((e: Error) => {
  process.stderr.write(`${e.stack ?? e.message}\n`);
  process.exit(1);
});
