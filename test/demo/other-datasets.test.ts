import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildupIndex, dailySeverityRating, fireWeatherIndex } from '../../demo/fwi.ts';
import { ADMIN_AREAS, COUNTRIES, insideBox } from '../../demo/regions.ts';
import { SMALL, makeTempDir, num, openDb, readAll, removeDir, writeInto, type Db } from './demo-fixture.ts';
import { isValidRing, parseWkt, ringAreaHa } from './wkt.ts';

let dir: string;
let db: Db;

beforeAll(async () => {
  dir = await makeTempDir();
  await writeInto(dir, { ...SMALL, scale: 1 });
  db = await openDb();
});
afterAll(async () => {
  db?.close();
  await removeDir(dir);
});

const LAND_COVER = 'BROADLEA + CONIFER + MIXED + SCLEROPH + TRANSIT + OTHERNATLC + AGRIAREAS + ARTIFSURF + OTHERLC';
const onLand = (lat: number, lon: number): boolean => ADMIN_AREAS.some((area) => insideBox(area.box, lat, lon));

describe('demo burnt areas', () => {
  it('carry EFFIS attributes: codes, dates in order, land cover summing to 100', async () => {
    const rows = await db.query(`SELECT *, ${LAND_COVER} AS cover FROM ${readAll(dir, 'burnt-areas', 1)}`);
    expect(rows.length).toBeGreaterThan(20);
    expect(new Set(rows.map((row) => row.id)).size).toBe(rows.length);
    const effisCodes = new Set(COUNTRIES.map((country) => country.effis));
    for (const row of rows) {
      expect(effisCodes.has(String(row.COUNTRY)), String(row.COUNTRY)).toBe(true);
      expect(Math.abs(num(row.cover) - 100)).toBeLessThanOrEqual(0.1);
      const [fire, last] = [row.FIREDATE as Date, row.LASTUPDATE as Date];
      expect(last.getTime()).toBeGreaterThanOrEqual(fire.getTime());
      expect(last.getTime()).toBeLessThanOrEqual(Date.parse('2025-08-02T00:00:00Z'));
      if (row.FINALDATE !== null) expect((row.FINALDATE as Date).getTime()).toBeGreaterThanOrEqual(fire.getTime());
      expect(num(row.PERCNA2K)).toBeGreaterThanOrEqual(0);
      expect(['30DAYS', 'FireSeason']).toContain(row.CLASS);
      expect(typeof row.PROVINCE === 'string' && typeof row.COMMUNE === 'string').toBe(true);
    }
    expect(rows.some((row) => row.COUNTRY === 'GR')).toBe(false);
  });

  it('store valid CRS84 (Multi)Polygons whose area is AREA_HA', async () => {
    const rows = await db.query(`SELECT AREA_HA, ST_AsText(geometry) AS wkt FROM ${readAll(dir, 'burnt-areas', 1)}`);
    const types = new Set<string>();
    for (const row of rows) {
      const { type, polygons } = parseWkt(String(row.wkt));
      types.add(type);
      const rings = polygons.flat();
      expect(rings.every(isValidRing)).toBe(true);
      const [lon, lat] = rings[0]?.[0] ?? [NaN, NaN];
      expect(onLand(lat, lon), `${lat} ${lon}`).toBe(true);
      const area = rings.reduce((sum, ring) => sum + ringAreaHa(ring, lat), 0);
      expect(Math.abs(area - num(row.AREA_HA)) / num(row.AREA_HA)).toBeLessThan(0.01);
    }
    expect([...types].sort()).toEqual(['MULTIPOLYGON', 'POLYGON']);
  });
});

describe('demo fire danger', () => {
  it('covers two models x both levels x every area x every day at 00:00 UTC', async () => {
    const rows = await db.query(`SELECT model, level, count(*) AS n, count(DISTINCT date) AS days,
        count(*) FILTER (WHERE strftime(date, '%H:%M:%S') <> '00:00:00') AS off
      FROM ${readAll(dir, 'fire-danger', 2)} GROUP BY ALL ORDER BY ALL`);
    const countries = new Set(ADMIN_AREAS.map((area) => area.iso2)).size;
    expect(rows.map((row) => [row.model, row.level, num(row.n), num(row.days), num(row.off)])).toEqual([
      ['cffdrs-era5', 'adminArea', ADMIN_AREAS.length * 3, 3, 0], ['cffdrs-era5', 'country', countries * 3, 3, 0],
      ['effis-ecmwf', 'adminArea', ADMIN_AREAS.length * 3, 3, 0], ['effis-ecmwf', 'country', countries * 3, 3, 0],
    ]);
  });

  it('names countries by ISO alpha-2 and admin areas by NUTS code', async () => {
    const rows = await db.query(`SELECT DISTINCT level, "areaCode" FROM ${readAll(dir, 'fire-danger', 2)}`);
    for (const row of rows) {
      expect(String(row.areaCode)).toMatch(row.level === 'country' ? /^[A-Z]{2}$/ : /^[A-Z]{2}[0-9A-Z]{1,3}$/);
    }
    expect(rows.some((row) => row.areaCode === 'PT11')).toBe(true);
  });

  it('has mutually consistent sub-indices (BUI from DMC/DC, FWI from ISI/BUI, DSR from FWI)', async () => {
    const rows = await db.query(`SELECT * FROM ${readAll(dir, 'fire-danger', 2)}`);
    for (const row of rows) {
      const [ffmc, dmc, dc, isi, bui, fwi, dsr] = ['FFMC', 'DMC', 'DC', 'ISI', 'BUI', 'FWI', 'DSR'].map((name) => num(row[name]));
      expect(ffmc).toBeGreaterThanOrEqual(0);
      expect(ffmc).toBeLessThanOrEqual(101);
      expect(Math.abs(buildupIndex(dmc ?? NaN, dc ?? NaN) - (bui ?? NaN))).toBeLessThan(0.02);
      expect(Math.abs(fireWeatherIndex(isi ?? NaN, bui ?? NaN) - (fwi ?? NaN))).toBeLessThan(0.05);
      expect(Math.abs(dailySeverityRating(fwi ?? NaN) - (dsr ?? NaN))).toBeLessThan(0.02 + 0.002 * (dsr ?? 0));
    }
    const [summer] = await db.query(`SELECT avg(FWI) AS fwi, avg(DC) AS dc FROM ${readAll(dir, 'fire-danger', 2)} WHERE level = 'country'`);
    expect(num(summer?.dc)).toBeGreaterThan(200);
    expect(num(summer?.fwi)).toBeGreaterThan(10);
  });
});

describe('demo sensor network', () => {
  it('registers at least 40 stations on land, at least 5 simulated, installed before the window', async () => {
    const rows = await db.query(`SELECT * FROM ${readAll(dir, 'sensor-stations', 0)}`);
    expect(rows.length).toBeGreaterThanOrEqual(40);
    expect(rows.filter((row) => row.simulated === true).length).toBeGreaterThanOrEqual(5);
    for (const row of rows) {
      expect(String(row.stationId)).toMatch(/^ST\d{4}$/);
      expect(onLand(num(row.latitude), num(row.longitude))).toBe(true);
      expect(num(row.elevationM)).toBeGreaterThan(0);
      expect((row.installedAtUtc as Date).getTime()).toBeLessThan(Date.parse('2025-07-30T00:00:00Z'));
    }
  });

  it('reads every station every 10 minutes, flagged like its station', async () => {
    const readings = readAll(dir, 'sensor-readings', 1);
    const stations = readAll(dir, 'sensor-stations', 0);
    const [row] = await db.query(`SELECT count(*) AS n, count(DISTINCT ("stationId", "measuredAtUtc")) AS slots,
        count(*) FILTER (WHERE extract(epoch FROM "measuredAtUtc")::BIGINT % 600 <> 0) AS off_mark,
        count(*) FILTER (WHERE r.simulated IS DISTINCT FROM s.simulated) AS mislabelled,
        (SELECT count(*) FROM ${stations}) AS stations
      FROM ${readings} r LEFT JOIN ${stations} s USING ("stationId")`);
    expect(num(row?.n)).toBe(num(row?.stations) * 144 * 3);
    expect(num(row?.slots)).toBe(num(row?.n));
    expect([num(row?.off_mark), num(row?.mislabelled)]).toEqual([0, 0]);
  });

  it('has plausible values: gusts over wind, directions in 0-360, mostly dry, warm afternoons, a few dropouts', async () => {
    const [row] = await db.query(`SELECT
        count(*) FILTER (WHERE "windGustMs" < "windSpeedMs") AS weak_gusts,
        count(*) FILTER (WHERE "windDirectionDeg" NOT BETWEEN 0 AND 360 OR "precipitationMm" < 0) AS out_of_range,
        avg(("precipitationMm" > 0)::INTEGER) AS wet_share,
        count(*) - count("airTemperatureC") AS missing, count(*) AS n,
        avg("airTemperatureC") FILTER (WHERE hour("measuredAtUtc") = 14) - avg("airTemperatureC") FILTER (WHERE hour("measuredAtUtc") = 4) AS swing
      FROM ${readAll(dir, 'sensor-readings', 1)}`);
    expect([num(row?.weak_gusts), num(row?.out_of_range)]).toEqual([0, 0]);
    expect(num(row?.wet_share)).toBeLessThan(0.2);
    expect(num(row?.missing)).toBeGreaterThan(0);
    expect(num(row?.missing) / num(row?.n)).toBeLessThan(0.05);
    expect(num(row?.swing)).toBeGreaterThan(5);
  });
});
