import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sensorReadings } from '../../../datasets/sensor-readings.ts';
import { compileRows, csvRows } from '../../../queries/sql/compile.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { at, rows, spec } from './compile-fixtures.ts';

let instance: DuckDBInstance;
let c: DuckDBConnection;
let dataDir: string;
let file: string;
const STATIONS = 150;
const ROWS = 60_000;
/** Many row groups, so that the scan is split among the threads (a list of ids planned as a join then reorders rows). */
const ROW_GROUP_ROWS = 2048;

beforeAll(async () => {
  // Several threads, as in the server: a join in the plan reorders rows only when work is split.
  instance = await DuckDBInstance.create(':memory:', { threads: '4' });
  c = await instance.connect();
  dataDir = await tempDir();
  file = path.join(dataDir, 'sensor-readings/date=2025-08-01/a.parquet');
  await mkdir(path.dirname(file), { recursive: true });
  await c.run(`COPY (
    SELECT 'S' || lpad(CAST(i % ${STATIONS} AS VARCHAR), 3, '0') AS "stationId",
      TIMESTAMPTZ '2025-08-01 00:00:00+00' + to_seconds(i // ${STATIONS}) AS "measuredAtUtc",
      false AS simulated, 20.5::DOUBLE AS "airTemperatureC", 40.0::DOUBLE AS "relativeHumidityPct", 3.0::DOUBLE AS "windSpeedMs",
      5.0::DOUBLE AS "windGustMs", 270.0::DOUBLE AS "windDirectionDeg", 0.0::DOUBLE AS "precipitationMm", 11.0::DOUBLE AS "fuelMoisturePct"
    FROM range(${ROWS}) r(i) ORDER BY i) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE ${ROW_GROUP_ROWS})`);
}, 120_000);
afterAll(() => instance.closeSync());

describe('filters keep the stored order a presorted file is read in', () => {
  it('a stationId list of 100 ids, read without a sort, comes back in (time, station) order', async () => {
    const ids = Array.from({ length: 100 }, (_, k) => `S${String(k).padStart(3, '0')}`);
    const s = spec(sensorReadings, dataDir, { filters: [{ kind: 'anyOf', column: 'stationId', values: ids }], params: { series: 'raw' } });
    const q = compileRows({ spec: s, files: [file], select: csvRows, from: at('2025-08-01'), to: at('2025-08-02'), order: 'stored' });
    const got = await rows(c, q);
    expect(got).toHaveLength((ROWS / STATIONS) * 100);
    const key = (r: unknown[]) => `${String(r[1])} ${String(r[0])}`;
    let outOfOrder = 0;
    for (let i = 1; i < got.length; i++) if (key(got[i]!) < key(got[i - 1]!)) outOfOrder++;
    expect(outOfOrder).toBe(0);
  }, 120_000);
});
