import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sensorStations } from '../../../datasets/sensor-stations.ts';
import { Engine, type Lease } from '../../../queries/engine/engine.ts';
import { readParquet } from '../../../queries/sql/sql.ts';
import { station, tempDir } from '../../helpers/fixtures.ts';
import { writeParquet } from '../../helpers/parquet.ts';

let root: string;
let dataDir: string;
let engine: Engine;
let lease: Lease;

beforeAll(async () => {
  root = await tempDir();
  dataDir = path.join(root, 'data');
  const inside = path.join(dataDir, 'sensor-stations/a.parquet');
  await writeParquet(inside, sensorStations, [station('S1')]);
  for (const outside of ['outside/a.parquet', 'data-old/a.parquet']) {
    await mkdir(path.dirname(path.join(root, outside)), { recursive: true });
    await copyFile(inside, path.join(root, outside));
  }
  engine = await Engine.create({ dataDir, tempDir: path.join(root, 'tmp'), threads: 2, connections: 1, memoryLimit: '256MB', maxQueued: 64 });
  lease = await engine.acquire();
});
afterAll(() => {
  lease.release();
  engine.close();
});

const run = (sql: string) => lease.connection.runAndReadAll(sql).then((r) => r.getRows());

describe('Engine.create locks DuckDB to DATA_DIR', () => {
  it('reads a Parquet file inside DATA_DIR (the control for the refusals below)', async () => {
    expect(await run(`SELECT "stationId" FROM ${readParquet([path.join(dataDir, 'sensor-stations/a.parquet')], dataDir)}`)).toEqual([['S1']]);
  });

  it.each([
    ['a folder outside DATA_DIR', 'outside/a.parquet'],
    ['a sibling folder sharing the DATA_DIR prefix', 'data-old/a.parquet'],
    ['a path escaping DATA_DIR with ..', 'data/../outside/a.parquet'],
  ])('refuses to read a Parquet file in %s', async (_what, rel) => {
    await expect(run(`SELECT * FROM read_parquet('${root}/${rel}')`)).rejects.toThrow(/Permission Error|disabled by configuration/);
  });

  it('refuses to read arbitrary files with other table functions', async () => {
    await expect(run("SELECT * FROM read_text('/etc/hostname')")).rejects.toThrow(/Permission Error/);
    await expect(run("SELECT * FROM read_csv('/etc/passwd')")).rejects.toThrow(/Permission Error/);
  });

  it.each([
    'SET enable_external_access = true',
    "SET allowed_directories = ['/']",
    'SET lock_configuration = false',
    "SET TimeZone = 'America/New_York'",
    'SET autoinstall_known_extensions = true',
  ])('refuses to change locked configuration: %s', async (statement) => {
    await expect(run(statement)).rejects.toThrow(/locked/);
  });

  it.each(['INSTALL spatial', 'LOAD spatial', 'INSTALL httpfs'])('refuses %s', async (statement) => {
    await expect(run(statement)).rejects.toThrow(/Permission Error|disabled/);
  });

  it('refuses to write or attach outside DATA_DIR', async () => {
    await expect(run(`COPY (SELECT 1) TO '${root}/outside/x.csv'`)).rejects.toThrow(/Permission Error/);
    await expect(run(`ATTACH '${root}/outside/x.duckdb'`)).rejects.toThrow(/Permission Error/);
  });

  it('keeps the settings it was given', async () => {
    const [row] = await run("SELECT current_setting('enable_external_access'), current_setting('lock_configuration'), current_setting('threads')");
    expect(row).toEqual([false, true, 2n]);
  });
});
