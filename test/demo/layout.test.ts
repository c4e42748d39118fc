import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMALL, listFiles, makeTempDir, num, openDb, readAll, removeDir, writeInto, type Db } from './demo-fixture.ts';

const TS = 'TIMESTAMP WITH TIME ZONE';
const D = 'DOUBLE';
const V = 'VARCHAR';
// Contract section 1, column for column (names, order, types).
const SCHEMAS: Record<string, string> = {
  hotspots: `id ${V}, product ${V}, acquiredAtUtc ${TS}, country ${V}, latitude ${D}, longitude ${D}, brightness ${D},
    bright_t31 ${D}, bright_ti4 ${D}, bright_ti5 ${D}, scan ${D}, track ${D}, acq_date ${V}, acq_time ${V}, satellite ${V},
    instrument ${V}, confidence ${V}, version ${V}, frp ${D}, daynight ${V}, type INTEGER`,
  'burnt-areas': `id BIGINT, FIREDATE ${TS}, LASTUPDATE ${TS}, FINALDATE ${TS}, COUNTRY ${V}, PROVINCE ${V}, COMMUNE ${V},
    AREA_HA ${D}, BROADLEA ${D}, CONIFER ${D}, MIXED ${D}, SCLEROPH ${D}, TRANSIT ${D}, OTHERNATLC ${D}, AGRIAREAS ${D},
    ARTIFSURF ${D}, OTHERLC ${D}, PERCNA2K ${D}, CLASS ${V}, geometry GEOMETRY`,
  'fire-danger': `date ${TS}, model ${V}, level ${V}, areaCode ${V}, areaName ${V}, FWI ${D}, FFMC ${D}, DMC ${D}, DC ${D},
    ISI ${D}, BUI ${D}, DSR ${D}`,
  'sensor-stations': `stationId ${V}, name ${V}, latitude ${D}, longitude ${D}, elevationM ${D}, simulated BOOLEAN, installedAtUtc ${TS}`,
  'sensor-readings': `stationId ${V}, measuredAtUtc ${TS}, simulated BOOLEAN, airTemperatureC ${D}, relativeHumidityPct ${D},
    windSpeedMs ${D}, windGustMs ${D}, windDirectionDeg ${D}, precipitationMm ${D}, fuelMoisturePct ${D}`,
};

const DAYS = ['2025-07-30', '2025-07-31', '2025-08-01'];
const EXPECTED_DIRS: Record<string, string[]> = {
  hotspots: DAYS.map((day) => `date=${day}`),
  'burnt-areas': ['month=2025-07', 'month=2025-08'],
  'fire-danger': ['cffdrs-era5', 'effis-ecmwf'].flatMap((model) => [`model=${model}/month=2025-07`, `model=${model}/month=2025-08`]),
  'sensor-stations': [''],
  'sensor-readings': DAYS.map((day) => `date=${day}`),
};

let dir: string;
let db: Db;
let written: Awaited<ReturnType<typeof writeInto>>;

beforeAll(async () => {
  dir = await makeTempDir();
  written = await writeInto(dir);
  db = await openDb();
});
afterAll(async () => {
  db?.close();
  await removeDir(dir);
});

describe('demo data layout', () => {
  it('writes one demo.parquet per partition and a _chain.json per dataset, nothing else', async () => {
    const expected = Object.entries(EXPECTED_DIRS).flatMap(([dataset, dirs]) => [
      `${dataset}/_chain.json`,
      ...dirs.map((partition) => path.join(dataset, partition, 'demo.parquet')),
    ]);
    expect(await listFiles(dir)).toEqual(expected.sort());
    expect(written.summaries.map((summary) => [summary.dataset, summary.files])).toEqual(
      Object.entries(EXPECTED_DIRS).map(([dataset, dirs]) => [dataset, dirs.length]),
    );
    expect(written.messages).toHaveLength(5);
    expect(written.messages[0]).toMatch(/^hotspots: [\d,]+ rows in 3 files, [\d.]+ s$/);
  });

  it.each(Object.entries(SCHEMAS))('%s files hold exactly the contract columns, in order, with their types', async (dataset, schema) => {
    const expected = schema.split(',').map((pair) => {
      const [, name = '', type = ''] = /^\s*(\S+)\s+(.+?)\s*$/.exec(pair) ?? [];
      return [name, type];
    });
    for (const partition of EXPECTED_DIRS[dataset] ?? []) {
      const file = path.join(dir, dataset, partition, 'demo.parquet');
      const columns = await db.query(`DESCRIBE SELECT * FROM read_parquet('${file}', hive_partitioning = false)`);
      const got = columns.map((column) => [column.column_name, String(column.column_type)]);
      expect(got.map(([name]) => name)).toEqual(expected.map(([name]) => name));
      got.forEach(([name, type], index) => {
        const want = expected[index]?.[1] ?? '?';
        if (want === 'GEOMETRY') expect(type, String(name)).toMatch(/^GEOMETRY/);
        else expect(type, String(name)).toBe(want);
      });
    }
  });

  it('counts every row it reports', async () => {
    for (const summary of written.summaries) {
      const depth = summary.dataset === 'fire-danger' ? 2 : summary.dataset === 'sensor-stations' ? 0 : 1;
      const [row] = await db.query(`SELECT count(*) AS n FROM ${readAll(dir, summary.dataset, depth)}`);
      expect(num(row?.n), summary.dataset).toBe(summary.rows);
      expect(summary.rows, summary.dataset).toBeGreaterThan(0);
    }
  });

  it.each([
    ['hotspots', 1, 'acquiredAtUtc', "strftime(acquiredAtUtc, '%Y-%m-%d')", 'date', 'id'],
    ['sensor-readings', 1, 'measuredAtUtc', "strftime(measuredAtUtc, '%Y-%m-%d')", 'date', '"stationId"'],
    ['burnt-areas', 1, 'FIREDATE', "strftime(FIREDATE, '%Y-%m')", 'month', 'id'],
    ['fire-danger', 2, 'date', "strftime(date, '%Y-%m')", 'month', '"areaCode"'],
  ])('%s rows lie in their partition and are sorted by the order key', async (dataset, depth, time, key, name, tie) => {
    const source = readAll(dir, dataset, depth);
    const outside = await db.query(
      `SELECT count(*) AS n FROM ${source} WHERE ${key} <> regexp_extract(filename, '${name}=([0-9-]+)', 1)`,
    );
    expect(num(outside[0]?.n)).toBe(0);
    const unsorted = await db.query(`SELECT count(*) AS n FROM (
      SELECT ${time} AS t, ${tie} AS k, lag(${time}) OVER w AS pt, lag(${tie}) OVER w AS pk
      FROM ${source} WINDOW w AS (PARTITION BY filename ORDER BY file_row_number)
    ) WHERE pt > t OR (pt = t AND pk >= k)`);
    expect(num(unsorted[0]?.n)).toBe(0);
  });

  it('derives _chain.json from the window end, not the clock', async () => {
    const chain = JSON.parse(await readFile(path.join(dir, 'hotspots', '_chain.json'), 'utf8'));
    expect(chain).toEqual({
      lastRunUtc: '2025-08-02T00:00:00Z',
      lastSuccessUtc: '2025-08-02T00:00:00Z',
      available: true,
      message: expect.stringContaining(`${written.summaries[0]?.rows} rows`),
    });
  });
});

describe('demo data determinism', () => {
  it('writes byte-identical files for the same options and different ones for another seed', async () => {
    const [again, other] = [await makeTempDir(), await makeTempDir()];
    try {
      await writeInto(again);
      await writeInto(other, { ...SMALL, seed: SMALL.seed + 1 });
      const files = await listFiles(dir);
      expect(await listFiles(again)).toEqual(files);
      for (const file of files) {
        const [first, second] = await Promise.all([readFile(path.join(dir, file)), readFile(path.join(again, file))]);
        expect(first.equals(second), file).toBe(true);
      }
      const hotspotFile = path.join('hotspots', 'date=2025-07-31', 'demo.parquet');
      const [mine, theirs] = await Promise.all([readFile(path.join(dir, hotspotFile)), readFile(path.join(other, hotspotFile))]);
      expect(mine.equals(theirs)).toBe(false);
    } finally {
      await Promise.all([removeDir(again), removeDir(other)]);
    }
  });

  it('replaces its own earlier files on a re-run and leaves other files alone', async () => {
    const target = await makeTempDir();
    try {
      await writeInto(target, { ...SMALL, days: 1, end: '2025-06-01' });
      const foreign = path.join(target, 'hotspots', 'date=2025-05-31', 'operator.parquet');
      await mkdir(path.dirname(foreign), { recursive: true });
      await writeFile(foreign, 'not ours');
      await writeInto(target, { ...SMALL, days: 1 });
      const files = await listFiles(target);
      expect(files.filter((file) => file.startsWith('hotspots/'))).toEqual([
        'hotspots/_chain.json',
        'hotspots/date=2025-05-31/operator.parquet',
        'hotspots/date=2025-08-01/demo.parquet',
      ]);
      expect(files.filter((file) => file.includes('2025-05') && !file.endsWith('operator.parquet'))).toEqual([]);
    } finally {
      await removeDir(target);
    }
  });
});
