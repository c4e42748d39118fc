import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sensorStations } from '../../../datasets/sensor-stations.ts';
import { Engine, type Lease } from '../../../queries/engine/engine.ts';
import { readParquet } from '../../../queries/sql/sql.ts';
import { station, tempDir } from '../../helpers/fixtures.ts';
import { writeParquet } from '../../helpers/parquet.ts';

/** Minutes of work unless interrupted; the tests below fail on time if an interrupt is lost. */
const LONG = 'SELECT sum(i)::BIGINT FROM range(100000000000) t(i)';
const SMALL = 'SELECT sum(i)::BIGINT FROM range(1000) t(i)';

let dataDir: string;
let engine: Engine;
let a: Lease;
let b: Lease;
beforeAll(async () => {
  const root = await tempDir();
  dataDir = path.join(root, 'data');
  await writeParquet(path.join(dataDir, 'sensor-stations/a.parquet'), sensorStations, [station('S2'), station('S1')]);
  engine = await Engine.create({ dataDir, tempDir: path.join(root, 'tmp'), threads: 2, connections: 2, memoryLimit: '256MB', maxQueued: 64 });
  [a, b] = [await engine.acquire(), await engine.acquire()];
});
afterAll(() => {
  a.release();
  b.release();
  engine.close();
});

const rows = async (c: DuckDBConnection, sql: string) => (await c.runAndReadAll(sql)).getRows();
const stationIds = (c: DuckDBConnection) =>
  rows(c, `SELECT "stationId" FROM ${readParquet([path.join(dataDir, 'sensor-stations/a.parquet')], dataDir)} ORDER BY 1`);

/** Interrupts `c` until `work` settles (an interrupt before the query starts is not remembered by DuckDB). */
async function interruptUntilSettled(c: DuckDBConnection, work: Promise<unknown>): Promise<{ error: unknown }> {
  const started = Date.now();
  let settled = false;
  const outcome = work.then(() => null, (e: unknown) => e).finally(() => (settled = true));
  while (!settled) {
    await new Promise((r) => setTimeout(r, 25));
    c.interrupt();
    if (Date.now() - started > 5000) break;
  }
  return { error: await outcome };
}

describe('connection.interrupt()', () => {
  // LONG would run for minutes: an INTERRUPT error is the interrupt having stopped it, on any machine.
  it('stops a long query with an INTERRUPT error', async () => {
    const { error } = await interruptUntilSettled(a.connection, rows(a.connection, LONG));
    expect(String(error)).toMatch(/INTERRUPT/);
  });

  it('leaves the same connection able to run the next queries correctly', async () => {
    await interruptUntilSettled(a.connection, rows(a.connection, LONG));
    expect(await rows(a.connection, SMALL)).toEqual([[499500n]]);
    expect(await stationIds(a.connection)).toEqual([['S1'], ['S2']]);
    expect(await rows(a.connection, SMALL)).toEqual([[499500n]]);
  });

  it('stops a long query whose first chunk is awaited through stream(), and the connection works after', async () => {
    const work = a.connection.stream(LONG).then((r) => r.fetchChunk());
    const { error } = await interruptUntilSettled(a.connection, work);
    expect(String(error)).toMatch(/INTERRUPT/);
    expect(await stationIds(a.connection)).toEqual([['S1'], ['S2']]);
  });

  it('ends a stream early when interrupted between chunks, and the connection works after', async () => {
    const result = await a.connection.stream('SELECT i FROM range(1000000000000) t(i)');
    expect((await result.fetchChunk())?.rowCount).toBeGreaterThan(0);
    a.connection.interrupt();
    let more = 0;
    const outcome = await (async () => {
      for (let chunk; (chunk = await result.fetchChunk()) && chunk.rowCount > 0 && more < 100_000; ) more++;
    })().then(() => 'ended', (e: unknown) => String(e));
    // DuckDB ends an interrupted stream as if it had finished (no error): extract.ts relies on its row count.
    expect(outcome === 'ended' || /INTERRUPT/.test(outcome)).toBe(true);
    expect(more).toBeLessThan(100_000);
    expect(await stationIds(a.connection)).toEqual([['S1'], ['S2']]);
  });

  it('on an idle connection does not poison the next query', async () => {
    a.connection.interrupt();
    expect(await rows(a.connection, SMALL)).toEqual([[499500n]]);
  });

  it('interrupts only its own connection: a query on another pooled connection completes', async () => {
    const long = rows(a.connection, LONG);
    const other = rows(b.connection, 'SELECT count(*)::BIGINT FROM range(200000000) t(i) WHERE i % 3 = 0');
    const { error } = await interruptUntilSettled(a.connection, long);
    expect(String(error)).toMatch(/INTERRUPT/);
    expect(await other).toEqual([[66666667n]]);
  });
});
