import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { burntAreas } from '../../datasets/burnt-areas.ts';
import { fireDanger } from '../../datasets/fire-danger.ts';
import { hotspots } from '../../datasets/hotspots.ts';
import { sensorReadings } from '../../datasets/sensor-readings.ts';
import { sensorStations } from '../../datasets/sensor-stations.ts';
import { dangerRow, hotspot, reading, station, tempDir, wkbPolygon, writeChain } from './fixtures.ts';
import { writeParquet, type Row } from './parquet.ts';
import { publish } from './corrections.ts';
import { CHAIN } from './sample-data.ts';

/** A published correction model over part of the readings: series=corrected aggregates its values. */
export const AGGREGATE_MODEL = {
  id: 'aggregate-test-1',
  publishedUtc: '2024-04-01T00:00:00Z',
  description: 'Test model',
  rules: [
    { stationId: 'ST0001', quantity: 'airTemperatureC', fromUtc: '2024-02-29T23:00:00Z', toUtc: null, factor: 1.07, offset: -2.5 },
    { stationId: '*', quantity: 'precipitationMm', fromUtc: null, toUtc: '2024-03-01T00:30:00Z', factor: 0.93, offset: 0.1 },
  ],
};

/**
 * Instants on every edge an aggregate has: days, an ISO week (Monday 2024-03-04), months, a leap
 * day, a year, the last microsecond before each.
 */
export const EDGE_INSTANTS = [
  '2024-02-28T00:00:00Z', '2024-02-28T23:59:59.999999Z', '2024-02-29T00:00:00Z', '2024-02-29T12:30:00Z', '2024-02-29T23:59:59.999999Z',
  '2024-03-01T00:00:00Z', '2024-03-03T23:59:59Z', '2024-03-04T00:00:00Z', '2024-03-04T00:59:59.999999Z', '2024-03-04T01:00:00Z',
  '2024-12-31T23:59:59.999999Z', '2025-01-01T00:00:00Z',
];

/**
 * Positions on cell edges (0.25°, 0.1°, and 0.01° edges where the plain floor of offset over size
 * lands in the cell before), on the grid's far edges, inside cells and outside the grid.
 */
const POSITIONS: [number, number][] = [[-8.25, 39.5], [-8.2500001, 39.4999999], [0.3, -0.1], [180, 90], [-180, -90], [12.34, 45.67], [-179.7, 89.9], [190, 10], [-179.9, -89.99]];
const COUNTRIES = ['PT', 'ES', null];
/** Tenths that a plain sum gets wrong, values that cancel, nulls, and ordinary ones. */
const FRP = [0.1, 0.1, 0.1, null, 1e16, 0.1, -1e16, 12.5, 0.1, 3.75, 0.1, 0.1, 0.1, 7.3, null, 0.1];

function hotspotRows(instant: string, n: number): Row[] {
  return Array.from({ length: 16 }, (_, i) => {
    const [longitude, latitude] = POSITIONS[(i + n) % POSITIONS.length]!;
    const modis = i % 5 === 0;
    return hotspot(`h-${instant}-${i}`, instant, {
      country: COUNTRIES[(i + n) % 3],
      longitude,
      latitude,
      frp: FRP[i],
      product: modis ? 'MODIS_NRT' : 'VIIRS_SNPP_NRT',
      instrument: modis ? 'MODIS' : 'VIIRS',
      daynight: i % 4 === 0 ? null : i % 2 ? 'D' : 'N',
      bright_ti4: modis ? null : 300 + i / 10,
    });
  });
}

async function writeHotspots(p: (...parts: string[]) => string): Promise<void> {
  const byDate = new Map<string, Row[]>();
  EDGE_INSTANTS.forEach((t, n) => byDate.set(t.slice(0, 10), [...(byDate.get(t.slice(0, 10)) ?? []), ...hotspotRows(t, n)]));
  for (const [date, rows] of byDate) await writeParquet(p(`hotspots/date=${date}/a.parquet`), hotspots, rows);
  // A late file beside the first, and files the service never reads.
  await writeParquet(p('hotspots/date=2024-02-29/late.parquet'), hotspots, hotspotRows('2024-02-29T06:00:00Z', 5));
  for (const ignored of ['_staging.parquet', '.hidden.parquet', 'notes.parquet.tmp']) await writeParquet(p(`hotspots/date=2024-02-29/${ignored}`), hotspots, hotspotRows('2024-02-29T06:00:00Z', 9));
}

const square = (x: number, y: number) => wkbPolygon([[[x, y], [x + 0.1, y], [x + 0.1, y + 0.1], [x, y + 0.1], [x, y]]]);

function perimeter(id: number, date: string, over: Row): Row {
  return {
    id, FIREDATE: date, LASTUPDATE: date, FINALDATE: null, COUNTRY: 'EL', PROVINCE: 'Attiki', COMMUNE: 'Marathon', AREA_HA: 0.1,
    BROADLEA: 10, CONIFER: 50, MIXED: 0, SCLEROPH: 30, TRANSIT: 5, OTHERNATLC: 0, AGRIAREAS: 5, ARTIFSURF: 0, OTHERLC: 0, PERCNA2K: null, CLASS: '30DAYS', geometry: square(23.9, 38.1), ...over,
  };
}

async function writeOthers(dir: string, p: (...parts: string[]) => string): Promise<void> {
  const areas = (month: string, dates: string[]) =>
    writeParquet(p(`burnt-areas/month=${month}/a.parquet`), burntAreas, dates.map((date, i) => perimeter(Number(`${month.replace('-', '')}${i}`), date, { COUNTRY: ['EL', 'PT', null][i % 3], CLASS: i % 2 ? 'FINAL' : null, AREA_HA: [0.1, 250.5, null, 0.1][i % 4], geometry: square(i % 2 ? 23.9 : -8.5, 38.1) })));
  await areas('2024-02', ['2024-02-28T00:00:00Z', '2024-02-29T23:59:59Z', '2024-02-29T10:00:00Z', '2024-02-01T00:00:00Z', '2024-02-15T00:00:00Z']);
  await areas('2024-03', ['2024-03-01T00:00:00Z', '2024-03-03T23:59:59Z', '2024-03-04T00:00:00Z', '2024-03-31T23:59:59.999999Z']);
  for (const model of ['cffdrs-era5', 'effis-ecmwf']) {
    for (const month of ['2024-02', '2024-03']) {
      const days = month === '2024-02' ? ['28', '29'] : ['01', '02', '04'];
      const rows = days.flatMap((day, i) => [
        dangerRow(`${month}-${day}T00:00:00Z`, model, 'country', 'PT', { FWI: [0.1, 20.5, null][i % 3] }),
        dangerRow(`${month}-${day}T00:00:00Z`, model, 'country', 'ES', { FWI: 0.1 }),
        dangerRow(`${month}-${day}T00:00:00Z`, model, 'adminArea', 'PT11', { FWI: 31.25 + i }),
      ]);
      await writeParquet(p(`fire-danger/model=${model}/month=${month}/a.parquet`), fireDanger, rows);
    }
  }
  await writeParquet(p('sensor-stations/stations.parquet'), sensorStations, [station('ST0001'), station('ST0002', { simulated: true, latitude: 38.5, longitude: -9.1 })]);
  for (const [date, hours] of [['2024-02-29', [22, 23]], ['2024-03-01', [0, 1]]] as const) {
    const rows = hours.flatMap((h) =>
      [0, 10, 20, 30, 40, 50].flatMap((m, i) => {
        const t = `${date}T${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:00Z`;
        return [reading('ST0001', t, { airTemperatureC: [0.1, 21.5, null][i % 3] }), reading('ST0002', t, { simulated: true }), reading('ST0099', t, { precipitationMm: 0.1 })];
      }),
    );
    await writeParquet(p(`sensor-readings/date=${date}/a.parquet`), sensorReadings, rows);
  }
  await publish(dir, AGGREGATE_MODEL);
  for (const d of ['hotspots', 'burnt-areas', 'fire-danger', 'sensor-stations', 'sensor-readings']) await writeChain(dir, d, CHAIN);
}

/** A DATA_DIR for aggregates: every dataset, rows on every bucket edge, null keys and measures, a late file and ignored ones. */
export async function writeAggregateData(): Promise<string> {
  const dir = await tempDir();
  const p = (...parts: string[]) => path.join(dir, ...parts);
  await writeHotspots(p);
  await writeOthers(dir, p);
  await writeFile(p('hotspots/date=2024-02-29/README.txt'), 'not data');
  return dir;
}

/**
 * Many hotspots of one July 2025 day as a SELECT for DuckDB to COPY to Parquet: `rows` rows at
 * `step` seconds apart (modulo the day), countries PT, ES, FR and null in turn, spread positions
 * and brightness; `frp` the expression of the radiative power over `i` (the row number).
 */
export function bulkHotspotsSql(o: { day: string; idPrefix: string; rows: number; step: number; frp: string }): string {
  const t = `(TIMESTAMPTZ '2025-07-${o.day} 00:00:00+00' + to_seconds((i * ${o.step}) % 86400))`;
  return `SELECT printf('${o.idPrefix}-%08d', i) AS id, CASE WHEN i % 3 = 0 THEN 'MODIS_NRT' ELSE 'VIIRS_SNPP_NRT' END AS product, ${t} AS "acquiredAtUtc",
      CASE i % 4 WHEN 0 THEN 'PT' WHEN 1 THEN 'ES' WHEN 2 THEN 'FR' ELSE NULL END AS country,
      (36.0 + (hash(i) % 9000) / 1000.0)::DOUBLE AS latitude, (-9.5 + (hash(i * 7) % 12000) / 1000.0)::DOUBLE AS longitude,
      NULL::DOUBLE AS brightness, NULL::DOUBLE AS bright_t31, (300 + (hash(i) % 997) / 7.0)::DOUBLE AS bright_ti4, 290.1::DOUBLE AS bright_ti5,
      0.39::DOUBLE AS scan, 0.36::DOUBLE AS track, '2025-07-${o.day}' AS acq_date, '0000' AS acq_time, 'N' AS satellite, 'VIIRS' AS instrument,
      'n' AS confidence, '2.0NRT' AS version, (${o.frp})::DOUBLE AS frp, 'D' AS daynight, NULL::INTEGER AS type
    FROM range(${o.rows}) r(i)`;
}

/**
 * The spool tests' servers: AGGREGATE_SPOOL_ROWS and AGGREGATE_SPOOL_GROUPS of 2,000 (a spooled answer of
 * more groups is read back from disk as it is sent), and three days of 1,200 rows each: a day alone
 * below SPOOL_ROWS (its answer held by DuckDB until sent), the three together past it and, a group a
 * row, past SPOOL_GROUPS.
 */
export const SPOOL_ROWS = 2000;
export const SPOOL_GROUPS = 2000;
export const SPOOL = { AGGREGATE_SPOOL_ROWS: String(SPOOL_ROWS), AGGREGATE_SPOOL_GROUPS: String(SPOOL_GROUPS) };
export const SPOOL_DAY_ROWS = Math.ceil(SPOOL_ROWS * 0.6);
export const SPOOL_DAYS = ['2025-08-01', '2025-08-02', '2025-08-03'];
