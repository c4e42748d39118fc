/**
 * Prototype for "render each row once": 1-hour hotspot windows (GeoJSON and CSV) answered
 *   A  today: GeoJSON staged through a table (runStaged + featureBytes, the in-memory path), CSV by
 *      DuckDB's COPY into a temp file read back (the whole-window path);
 *   B  from a Parquet sidecar of the rendered text, read by DuckDB (row groups pruned on the key);
 *   C  from a flat sidecar of the rendered text: one byte range read from disk, index in memory;
 *   D  from the rendered text held in memory: one slice of one buffer;
 *   F  the engine floor's query for reference (small-windows' floor: `SELECT *` of the hour, ordered,
 *      every row fetched into a materialized result; not the contract's bytes).
 * Every window's bytes are asserted equal to today's. Runs are paired (every variant on every
 * window, in a rotating order, several rounds in one process), because the machine is shared.
 *
 *   npm run bench:render -- [--rounds 5] [--data-dir DIR]
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { hotspots } from '../datasets/hotspots.ts';
import { runStaged } from '../queries/extract/staged-run.ts';
import type { DataFile } from '../queries/files/data-file.ts';
import { compileRows, csvRows, featureRows, type QuerySpec } from '../queries/sql/compile.ts';
import { compileCopy, CSV_COPY } from '../queries/sql/compile-copy.ts';
import { compileStaged } from '../queries/sql/compile-staged.ts';
import { copyInto } from '../queries/encode/copy-stream.ts';
import { featureBytes } from '../queries/extract/in-memory.ts';
import { listParquet } from './server/data.ts';
import { quantile } from './scenarios/load-run.ts';
import { REPO_ROOT } from './lib/options.ts';
import { fromFlatSidecar, fromMemory, fromParquetSidecar, renderFile, sidecarName, writeFlatSidecar, writeParquetSidecar, type Rendered } from './render-store.ts';

type Format = 'geojson' | 'csv';
const VARIANTS = ['A today', 'B parquet sidecar', 'C flat sidecar', 'D memory', 'F floor SELECT *'] as const;
type Variant = (typeof VARIANTS)[number];
const HOUR_US = 3_600_000_000n;

const { values } = parseArgs({ options: { rounds: { type: 'string' }, 'data-dir': { type: 'string' } } });
const rounds = Number(values.rounds ?? 5);
const dataDir = path.resolve(values['data-dir'] ?? path.join(REPO_ROOT, 'var/bench-data/render-proto'));
const workDir = path.join(REPO_ROOT, 'var/render-proto');

/** Two busy days at the bench's default volume (scale 10: about 5 M hotspots a year). */
function ensureData(): void {
  if (existsSync(path.join(dataDir, 'hotspots'))) return;
  const args = ['bin/fire-api.js', 'demo-data', '--out', dataDir, '--end', '2025-07-03', '--days', '2', '--scale', '10', '--seed', '1'];
  if (spawnSync(process.execPath, args, { cwd: REPO_ROOT, stdio: 'inherit' }).status !== 0) throw new Error('demo-data failed');
}

interface Day {
  file: DataFile;
  start: bigint;
  order: 'stored' | 'sort';
  rendered: Rendered;
  sidecar: string;
}

/** Today's presorted test, as the file check makes it: no key repeated or smaller than the one before. */
async function storedInOrder(c: DuckDBConnection, file: string): Promise<boolean> {
  const sql = `SELECT count(*) FILTER (WHERE pa IS NOT NULL AND NOT (pa < a OR (pa = a AND pi < i))) FROM (SELECT "acquiredAtUtc" a, id i, lag("acquiredAtUtc") OVER () pa, lag(id) OVER () pi FROM read_parquet('${file}'))`;
  return (await c.runAndReadAll(sql)).getRows()[0]?.[0] === 0n;
}

async function today(c: DuckDBConnection, spec: QuerySpec, day: Day, format: Format, from: bigint, to: bigint): Promise<Buffer> {
  const query = { spec, files: [day.file.path], from, to, order: day.order };
  if (format === 'geojson') {
    const staged = compileStaged({ ...query, select: featureRows, bindFiles: true })!;
    return featureBytes(await runStaged(c, staged, ''));
  }
  const target = path.join(workDir, `today-${process.pid}.csv`);
  await copyInto(c, compileCopy(compileRows({ ...query, select: csvRows }), CSV_COPY, target, workDir));
  const bytes = await readFile(target);
  await rm(target, { force: true });
  return bytes;
}

/** The floor's statement (bench/scenarios/engine-floor.ts), its rows fetched; nothing is compared. */
async function floor(c: DuckDBConnection, day: Day, from: bigint, to: bigint): Promise<Buffer> {
  const hour = (us: bigint) => new Date(Number(us / 1000n)).toISOString().replace('T', ' ').replace(/\.000Z$/, '+00');
  const where = `"acquiredAtUtc" >= TIMESTAMPTZ '${hour(from)}' AND "acquiredAtUtc" < TIMESTAMPTZ '${hour(to)}'`;
  await c.run(`SELECT * FROM read_parquet(['${day.file.path}'], hive_partitioning = false) WHERE ${where} ORDER BY "acquiredAtUtc", "id"`);
  return Buffer.alloc(0);
}

function run(c: DuckDBConnection, spec: QuerySpec, day: Day, v: Variant, format: Format, from: bigint, to: bigint): Promise<Buffer> | Buffer {
  if (v === 'A today') return today(c, spec, day, format, from, to);
  if (v === 'B parquet sidecar') return fromParquetSidecar(c, `${day.sidecar}.parquet`, format, from, to);
  if (v === 'C flat sidecar') return fromFlatSidecar(day.rendered, day.sidecar, format, from, to);
  if (v === 'F floor SELECT *') return floor(c, day, from, to);
  return fromMemory(day.rendered, format, from, to);
}

async function prepareDay(c: DuckDBConnection, spec: QuerySpec, file: string, log: string[]): Promise<Day> {
  const s = await stat(file);
  const dataFile: DataFile = { path: file, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
  const day = /date=(\d{4}-\d{2}-\d{2})/.exec(file)![1]!;
  const started = performance.now();
  const rendered = await renderFile(c, spec, file, workDir);
  const renderMs = performance.now() - started;
  const sidecar = path.join(workDir, sidecarName(dataFile));
  await writeFlatSidecar(rendered, sidecar);
  await writeParquetSidecar(c, rendered, `${sidecar}.parquet`);
  const sizes = [s.size, rendered.features.length, rendered.csv.length, (await stat(`${sidecar}.parquet`)).size].map((b) => (b / 1e6).toFixed(2));
  log.push(`${day}: ${rendered.keys.length} rows, rendered in ${renderMs.toFixed(0)} ms; MB data file ${sizes[0]}, Features ${sizes[1]}, CSV ${sizes[2]}, Parquet sidecar ${sizes[3]}`);
  return { file: dataFile, start: BigInt(Date.parse(`${day}T00:00:00Z`)) * 1000n, order: (await storedInOrder(c, file)) ? 'stored' : 'sort', rendered, sidecar };
}

type Times = Record<Format, Record<Variant, number[]>>;

/** Every variant on every hour of every day, order rotated per window; bytes compared with today's. */
async function measure(c: DuckDBConnection, spec: QuerySpec, days: Day[], times: Times, rows: number[]): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    let w = 0;
    for (const day of days)
      for (let h = 0n; h < 24n; h++, w++)
        for (const format of ['geojson', 'csv'] as const) {
          const from = day.start + h * HOUR_US;
          const to = from + HOUR_US;
          const out = new Map<Variant, Buffer>();
          for (let k = 0; k < VARIANTS.length; k++) {
            const v = VARIANTS[(k + w + round) % VARIANTS.length]!;
            const started = performance.now();
            out.set(v, await run(c, spec, day, v, format, from, to));
            times[format][v].push(performance.now() - started);
          }
          const expected = out.get('A today')!;
          for (const [v, b] of out) if (v !== 'F floor SELECT *' && !b.equals(expected)) throw new Error(`${v} ${format} differs from today's bytes for ${from}`);
          if (round === 0 && format === 'csv') rows.push(expected.length === 0 ? 0 : expected.toString('latin1').split('\n').length - 1);
        }
  }
}

function report(all: Times, rows: number[], busyOnly: boolean): void {
  const fmt = (x: number) => x.toFixed(3).padStart(8);
  const keep = (xs: number[]) => xs.filter((_, n) => !busyOnly || rows[n % rows.length]! > 0);
  for (const format of ['geojson', 'csv'] as const) {
    const times = { [format]: Object.fromEntries(VARIANTS.map((v) => [v, keep(all[format][v])])) } as Times;
    const median = (v: Variant) => quantile([...times[format][v]].sort((a, b) => a - b), 0.5);
    const mean = (v: Variant) => times[format][v].reduce((a, b) => a + b, 0) / times[format][v].length;
    const which = busyOnly ? 'hours with rows only' : 'every hour';
    console.log(`\n${format}, ${which}: ms a window (${times[format]['A today'].length} each)  min   median      p90     mean   today÷this (median, mean)`);
    for (const v of VARIANTS) {
      const sorted = [...times[format][v]].sort((a, b) => a - b);
      const ratios = `${(median('A today') / median(v)).toFixed(1)} × , ${(mean('A today') / mean(v)).toFixed(1)} ×`;
      console.log(`  ${v.padEnd(20)} ${fmt(sorted[0]!)} ${fmt(median(v))} ${fmt(quantile(sorted, 0.9))} ${fmt(mean(v))}   ${ratios}`);
    }
  }
  if (busyOnly) return;
  const busy = rows.filter((n) => n > 0);
  console.log(`\nrows a window: mean ${(rows.reduce((a, b) => a + b, 0) / rows.length).toFixed(0)} over ${rows.length} hours; ${busy.length} hours with rows, mean ${(busy.reduce((a, b) => a + b, 0) / Math.max(1, busy.length)).toFixed(0)}`);
}

async function main(): Promise<void> {
  ensureData();
  await mkdir(workDir, { recursive: true });
  const cpus = os.cpus();
  console.log(`machine: ${cpus.length} cores, ${cpus[0]?.model}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}; load before ${os.loadavg().map((l) => l.toFixed(2)).join(' / ')}`);
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const c = await instance.connect();
  const spec: QuerySpec = { descriptor: hotspots, dataDir, filters: [], params: {}, stationFiles: null };
  const log: string[] = [];
  const days: Day[] = [];
  for (const file of await listParquet(dataDir, 'hotspots')) days.push(await prepareDay(c, spec, file, log));
  log.forEach((l) => console.log(l));
  console.log(`order: ${days.map((d) => d.order).join(', ')}; rounds ${rounds}, paired (every variant on each window, order rotated)`);
  const empty = () => Object.fromEntries(VARIANTS.map((v) => [v, [] as number[]])) as Record<Variant, number[]>;
  const times: Times = { geojson: empty(), csv: empty() };
  const rows: number[] = [];
  const started = performance.now();
  await measure(c, spec, days, times, rows);
  report(times, rows, false);
  report(times, rows, true);
  console.log(`\nevery window's bytes equal today's in every variant; ${((performance.now() - started) / 1000).toFixed(1)} s; load after ${os.loadavg().map((l) => l.toFixed(2)).join(' / ')}`);
  c.closeSync();
  instance.closeSync();
  await rm(workDir, { recursive: true, force: true });
}

await main();
