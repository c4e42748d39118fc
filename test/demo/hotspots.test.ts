import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_AREAS, SEA_BOXES, insideBox } from '../../demo/regions.ts';
import { SMALL, makeTempDir, num, openDb, readAll, removeDir, writeInto, type Db } from './demo-fixture.ts';

let dir: string;
let db: Db;
let source: string;

beforeAll(async () => {
  dir = await makeTempDir();
  await writeInto(dir, { ...SMALL, scale: 1 });
  db = await openDb();
  source = readAll(dir, 'hotspots', 1);
});
afterAll(async () => {
  db?.close();
  await removeDir(dir);
});

const count = async (where: string): Promise<number> => num((await db.query(`SELECT count(*) AS n FROM ${source} WHERE ${where}`))[0]?.n);

describe('demo hotspots look like FIRMS NRT', () => {
  it('has thousands of detections from MODIS and both VIIRS satellites', async () => {
    const rows = await db.query(`SELECT product, satellite, count(*) AS n FROM ${source} GROUP BY ALL ORDER BY ALL`);
    expect(rows.map((row) => [row.product, row.satellite])).toEqual([
      ['MODIS_NRT', 'A'], ['MODIS_NRT', 'T'], ['VIIRS_NOAA20_NRT', '1'], ['VIIRS_SNPP_NRT', 'N'],
    ]);
    expect(rows.every((row) => num(row.n) > 100)).toBe(true);
  });

  it('keeps acq_date and acq_time (HHMM, leading zeros) consistent with acquiredAtUtc', async () => {
    expect(await count(`acq_date <> strftime(acquiredAtUtc, '%Y-%m-%d') OR acq_time <> strftime(acquiredAtUtc, '%H%M')`)).toBe(0);
    expect(await count(`NOT regexp_full_match(acq_time, '[0-2][0-9][0-5][0-9]')`)).toBe(0);
    expect(await count(`acq_time LIKE '0%'`)).toBeGreaterThan(0);
    expect(await count(`acq_time LIKE '00%'`)).toBeGreaterThan(0);
  });

  it('fills MODIS columns for MODIS and VIIRS columns for VIIRS, as delivered', async () => {
    const modisOk = `instrument = 'MODIS' AND product = 'MODIS_NRT' AND satellite IN ('T', 'A') AND version = '6.1NRT'
      AND brightness BETWEEN 300 AND 505 AND bright_t31 BETWEEN 250 AND 340 AND bright_ti4 IS NULL AND bright_ti5 IS NULL
      AND regexp_full_match(confidence, '[0-9]{1,3}') AND TRY_CAST(confidence AS INTEGER) BETWEEN 0 AND 100
      AND scan BETWEEN 1 AND 4.8 AND track BETWEEN 1 AND 2`;
    const viirsOk = `instrument = 'VIIRS' AND version = '2.0NRT'
      AND ((product = 'VIIRS_SNPP_NRT' AND satellite = 'N') OR (product = 'VIIRS_NOAA20_NRT' AND satellite = '1'))
      AND bright_ti4 BETWEEN 280 AND 367 AND bright_ti5 BETWEEN 250 AND 340 AND brightness IS NULL AND bright_t31 IS NULL
      AND confidence IN ('l', 'n', 'h') AND scan BETWEEN 0.32 AND 0.8 AND track BETWEEN 0.36 AND 0.78`;
    expect(await count(`NOT ((${modisOk}) OR (${viirsOk}))`)).toBe(0);
    expect(await count(`frp <= 0 OR frp IS NULL OR type IS NOT NULL OR daynight NOT IN ('D', 'N')`)).toBe(0);
    for (const level of ['l', 'n', 'h']) expect(await count(`confidence = '${level}'`)).toBeGreaterThan(0);
  });

  it('flags day and night consistently with local solar time', async () => {
    const solarHour = `((extract(epoch FROM acquiredAtUtc) / 3600 + longitude / 15) % 24 + 24) % 24`;
    expect(await count(`daynight = 'D' AND NOT (${solarHour} BETWEEN 8 AND 16)`)).toBe(0);
    expect(await count(`daynight = 'N' AND ${solarHour} BETWEEN 6 AND 18`)).toBe(0);
  });

  it('gives every detection a unique, stable id built from product, date and a counter', async () => {
    const [row] = await db.query(`SELECT count(*) AS n, count(DISTINCT id) AS ids FROM ${source}`);
    expect(num(row?.ids)).toBe(num(row?.n));
    expect(await count(`NOT regexp_full_match(id, product || '_' || replace(acq_date, '-', '') || '_[0-9]{6}')`)).toBe(0);
  });

  it('groups detections of one overpass under one acquisition time', async () => {
    const [row] = await db.query(`SELECT max(n) AS biggest, sum(n) FILTER (WHERE n > 1) / sum(n) AS shared
      FROM (SELECT acquiredAtUtc, count(*) AS n FROM ${source} GROUP BY 1)`);
    expect(num(row?.biggest)).toBeGreaterThan(20);
    expect(num(row?.shared)).toBeGreaterThan(0.8);
  });

  it('puts each detection in the country its coordinates are in (null only at sea)', async () => {
    const rows = await db.query(`SELECT country, latitude, longitude FROM ${source}`);
    const misplaced = rows.filter((row) => {
      const [lat, lon] = [num(row.latitude), num(row.longitude)];
      if (row.country === null) return !SEA_BOXES.some((box) => insideBox(box, lat, lon));
      return !ADMIN_AREAS.some((area) => area.iso2 === row.country && insideBox(area.box, lat, lon));
    });
    expect(misplaced).toEqual([]);
    expect(new Set(rows.map((row) => row.country)).size).toBeGreaterThanOrEqual(8);
  });
});
