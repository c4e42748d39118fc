import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection, type DuckDBDataChunk } from '@duckdb/node-api';
import { listParquet, quoteSql, readParquetSql } from '../server/data.ts';
import { quantile } from './load-run.ts';
import type { DayWindow } from '../lib/options.ts';
import { randomHours } from './small-windows.ts';

export interface FloorAsk {
  dataDir: string;
  dataset: string;
  timeColumn: string;
  orderBy: readonly string[];
  window: DayWindow;
  /** The server's DUCKDB_CONNECTIONS and DUCKDB_THREADS, and its memory limit. */
  connections: number;
  threads: number;
  memoryLimit: string;
  seconds: number;
  sequentialSeconds: number;
}

export interface FloorResult {
  connections: number;
  threads: number;
  queries: number;
  queriesPerSecond: number;
  p99Ms: number;
  sequentialQueries: number;
  sequentialP50Ms: number;
  /** Rows fetched per query, on average (the hours' features). */
  meanRows: number;
}

const hourText = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace(/\.000Z$/, '+00');

/** The day partition's files of each hour, listed once. */
async function filesByDay(dataDir: string, dataset: string): Promise<Map<string, string[]>> {
  const byDay = new Map<string, string[]>();
  for (const f of await listParquet(dataDir, dataset)) {
    const day = /date=(\d{4}-\d{2}-\d{2})/.exec(f.split(path.sep).join('/'))?.[1];
    if (day) byDay.set(day, [...(byDay.get(day) ?? []), f]);
  }
  return byDay;
}

/**
 * small-windows' engine floor: DuckDB in the bench's process, with the server's connections and
 * threads, answering the same hours (the same seeded draw) with their whole ordered rows, every chunk
 * fetched: what the engine alone gives, against which the server's requests per second are read.
 */
export async function runEngineFloor(ask: FloorAsk, seed: number): Promise<FloorResult> {
  const byDay = await filesByDay(ask.dataDir, ask.dataset);
  const instance = await DuckDBInstance.create(':memory:', { threads: String(ask.threads), memory_limit: ask.memoryLimit });
  const connections: DuckDBConnection[] = [];
  for (let i = 0; i < ask.connections; i++) connections.push(await instance.connect());
  const nextHour = randomHours(ask.window, seed);
  const order = ask.orderBy.map((c) => `"${c}"`).join(', ');
  let rows = 0;
  const query = async (c: DuckDBConnection): Promise<number> => {
    const start = nextHour();
    const files = byDay.get(new Date(start).toISOString().slice(0, 10)) ?? [];
    const started = performance.now();
    if (files.length === 0) return performance.now() - started;
    const where = `"${ask.timeColumn}" >= TIMESTAMPTZ ${quoteSql(hourText(start))} AND "${ask.timeColumn}" < TIMESTAMPTZ ${quoteSql(hourText(start + 3_600_000))}`;
    const result = await c.stream(`SELECT * FROM ${readParquetSql(files)} WHERE ${where} ORDER BY ${order}`);
    for (let chunk: DuckDBDataChunk | null; (chunk = await result.fetchChunk()) && chunk.rowCount > 0; ) rows += chunk.rowCount;
    return performance.now() - started;
  };
  const loop = async (c: DuckDBConnection, seconds: number, times: number[]) => {
    for (const end = performance.now() + seconds * 1000; performance.now() < end; ) times.push(await query(c));
  };
  try {
    const sequential: number[] = [];
    await loop(connections[0]!, ask.sequentialSeconds, sequential);
    const concurrent: number[] = [];
    const rowsBefore = rows;
    await Promise.all(connections.map((c) => loop(c, ask.seconds, concurrent)));
    const sort = (xs: number[]) => [...xs].sort((a, b) => a - b);
    return {
      connections: ask.connections,
      threads: ask.threads,
      queries: concurrent.length,
      queriesPerSecond: concurrent.length / ask.seconds,
      p99Ms: quantile(sort(concurrent), 0.99),
      sequentialQueries: sequential.length,
      sequentialP50Ms: quantile(sort(sequential), 0.5),
      meanRows: (rows - rowsBefore) / Math.max(1, concurrent.length),
    };
  } finally {
    for (const c of connections) c.closeSync();
    instance.closeSync();
  }
}
