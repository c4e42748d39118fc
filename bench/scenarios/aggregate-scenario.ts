/**
 * Scenario `aggregate` (issue 27): each aggregate of the real server, measured over HTTP, beside
 * DuckDB's own GROUP BY over the same files and window in this process with every core (plain sum
 * and avg: the server's sums are exact, see docs/aggregates.md), and beside fetching the same year
 * of hotspots as CSV from the same server; the server's peak RSS during each. Best of N runs each.
 * Cold: on a server without its aggregate cache, so every run computes; repeat: the same requests
 * on a server with the cache on (aggregate-repeat.ts).
 */
import os from 'node:os';
import { DuckDBInstance } from '@duckdb/node-api';
import { listParquet, readParquetSql, windowWhere } from '../server/data.ts';
import type { DayWindow } from '../lib/options.ts';
import { readStatusMb, sampleRss } from '../server/rss.ts';
import { readMetric } from '../server/server-metrics.ts';
import { repeatFigures, served, type AggregateRepeat } from './aggregate-repeat.ts';
import type { ServerProcess } from '../server/server-process.ts';
import { atMost, headline, info, type Figure } from '../measure/table.ts';

/** The groups a response may hold in the scenario: all of them, as DuckDB's GROUP BY gives them all. */
export const AGGREGATE_BENCH_ROW_LIMIT = '10000000';
/** The cold server's settings: every request computes its answer. */
export const AGGREGATE_COLD_ENV = { AGGREGATE_ROW_LIMIT: AGGREGATE_BENCH_ROW_LIMIT, AGGREGATE_CACHE_MB: '0' };
/** The repeat server's: the aggregate cache as shipped (AGGREGATE_CACHE_MB's default). */
export const AGGREGATE_REPEAT_ENV = { AGGREGATE_ROW_LIMIT: AGGREGATE_BENCH_ROW_LIMIT };

export interface AggregateCase {
  name: string;
  dataset: string;
  path: (year: string) => string;
  reference: (files: string, inYear: (column: string) => string) => string;
}

const DAY_US = 86_400_000_000;

export const AGGREGATE_CASES: AggregateCase[] = [
  {
    name: 'daily x country, frp.sum, frp.max',
    dataset: 'hotspots',
    path: (y) => `/api/v1/hotspots/aggregate?${y}&groupBy=country&stats=frp.sum,frp.max&format=csv`,
    reference: (f, inYear) => `SELECT epoch_us("acquiredAtUtc") // ${DAY_US} AS d, country, count(*), sum(frp), max(frp) FROM ${f} WHERE ${inYear('acquiredAtUtc')} GROUP BY ALL ORDER BY ALL`,
  },
  {
    name: 'year x 0.25 degree grid',
    dataset: 'hotspots',
    path: (y) => `/api/v1/hotspots/aggregate?${y}&interval=year&groupBy=grid&cell=0.25&format=csv`,
    reference: (f, inYear) => `SELECT floor((longitude + 180) / 0.25) AS x, floor((latitude + 90) / 0.25) AS y, count(*) FROM ${f} WHERE ${inYear('acquiredAtUtc')} GROUP BY ALL ORDER BY ALL`,
  },
  {
    name: 'hourly x station, means',
    dataset: 'sensor-readings',
    path: (y) => `/api/v1/sensor-readings/aggregate?${y}&interval=hour&groupBy=stationId&stats=airTemperatureC.mean,relativeHumidityPct.mean,windSpeedMs.mean&format=csv`,
    reference: (f, inYear) =>
      `SELECT epoch_us("measuredAtUtc") // 3600000000 AS h, "stationId", count(*), avg("airTemperatureC"), avg("relativeHumidityPct"), avg("windSpeedMs") FROM ${f} WHERE ${inYear('measuredAtUtc')} GROUP BY ALL ORDER BY ALL`,
  },
];

export interface AggregateCaseResult {
  name: string;
  groups: number;
  serverMs: number;
  referenceMs: number;
  /** Peak VmRSS of the server (50 ms samples) while this case's requests ran. */
  peakRssMb: number;
}

export interface AggregateResult {
  cases: AggregateCaseResult[];
  /** The same cases asked again on a server with the aggregate cache on; null: not measured. */
  repeats: AggregateRepeat[] | null;
  yearCsvMs: number;
  /** The server's VmHWM after the aggregates, before the year of CSV. */
  vmHwmMb: number | null;
  runs: number;
}

const best = (xs: number[]) => Math.min(...xs);

/** DuckDB's own GROUP BY, every core, timed around the statement; the groups it found. */
async function reference(sql: string, runs: number): Promise<{ ms: number; groups: number }> {
  const instance = await DuckDBInstance.create(':memory:', { threads: String(os.availableParallelism()) });
  const c = await instance.connect();
  const ms: number[] = [];
  let groups = 0;
  try {
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      groups = (await c.runAndReadAll(sql)).currentRowCount;
      ms.push(performance.now() - started);
    }
  } finally {
    c.closeSync();
    instance.closeSync();
  }
  return { ms: best(ms), groups };
}

/** The rows of the files in the window, as DuckDB counts them. */
async function yearCount(files: string, where: string): Promise<number> {
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  try {
    return Number((await c.runAndReadAll(`SELECT count(*) FROM ${files} WHERE ${where}`)).getRows()[0]![0]);
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}

/** Every case on `server` (run with AGGREGATE_COLD_ENV and a ROW_LIMIT above the year), then the year of hotspots as CSV, whole. */
export async function measureAggregates(server: ServerProcess, dataDir: string, window: DayWindow, runs: number, log: (line: string) => void): Promise<AggregateResult> {
  const year = `from=${window.from}&to=${window.to}`;
  const inYear = (column: string) => windowWhere(column, window);
  const cases: AggregateCaseResult[] = [];
  for (const c of AGGREGATE_CASES) {
    log(`aggregate: ${c.name}: GET ${c.path(year)} ...`);
    const ref = await reference(c.reference(readParquetSql(await listParquet(dataDir, c.dataset)), inYear), runs);
    const rss = sampleRss(server.pid);
    const got = await served(server, c.path(year), runs).finally(() => rss.stop());
    if (got[0]!.rows !== ref.groups) throw new Error(`${c.name}: the server sent ${got[0]!.rows} groups, DuckDB found ${ref.groups}`);
    cases.push({ name: c.name, groups: ref.groups, serverMs: best(got.map((r) => r.wallMs)), referenceMs: ref.ms, peakRssMb: rss.stop().peakMb });
  }
  const vmHwmMb = readStatusMb(server.pid, 'VmHWM');
  const yearRows = await yearCount(readParquetSql(await listParquet(dataDir, 'hotspots')), inYear('acquiredAtUtc'));
  const yearCsv = await served(server, `/api/v1/hotspots?${year}&format=csv`, runs);
  // The reference is the whole year: a server whose ROW_LIMIT cut it would flatter every ratio.
  if (yearCsv[0]!.rows !== yearRows) throw new Error(`year as CSV: the server sent ${yearCsv[0]!.rows} rows of ${yearRows} (ROW_LIMIT below the year?)`);
  const yearCsvMs = best(yearCsv.map((r) => r.wallMs));
  if ((await readMetric(server.baseUrl, 'fire_api_aggregate_cache_hits_total')) !== 0) throw new Error('the cold server answered from its aggregate cache: start it with AGGREGATE_COLD_ENV');
  return { cases, repeats: null, yearCsvMs, vmHwmMb, runs };
}

/** The scenario's figures: per case its groups, cold and repeat times, both ratios of each against their targets, and peak RSS. */
export function aggregateFigures(r: AggregateResult): Figure[] {
  const s = 'aggregate';
  return [
    info(s, `hotspot year as CSV from the cold server, best of ${r.runs}`, r.yearCsvMs, 'ms'),
    ...r.cases.flatMap((c) => [
      info(s, `${c.name}: groups`, c.groups),
      info(s, `${c.name}: DuckDB GROUP BY, every core, best of ${r.runs}`, c.referenceMs, 'ms'),
      info(s, `${c.name}: cold (computed, AGGREGATE_CACHE_MB=0), best of ${r.runs}`, c.serverMs, 'ms'),
      headline(atMost(s, `${c.name}: cold ÷ GROUP BY`, c.serverMs / c.referenceMs, 1.2)),
      headline(atMost(s, `${c.name}: cold ÷ year as CSV`, c.serverMs / r.yearCsvMs, 0.02)),
      atMost(s, `${c.name}: cold server peak RSS (VmRSS, 50 ms samples)`, c.peakRssMb, 300, 'MB'),
      ...repeatFigures(s, c, r.repeats?.find((x) => x.name === c.name) ?? null, r.yearCsvMs),
    ]),
    atMost(s, 'cold server VmHWM after the aggregates', r.vmHwmMb ?? Number.NaN, 300, 'MB'),
  ];
}
