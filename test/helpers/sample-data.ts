import path from 'node:path';
import { burntAreas } from '../../datasets/burnt-areas.ts';
import { fireDanger } from '../../datasets/fire-danger.ts';
import { hotspots } from '../../datasets/hotspots.ts';
import { sensorReadings } from '../../datasets/sensor-readings.ts';
import { sensorStations } from '../../datasets/sensor-stations.ts';
import { dangerRow, hotspot, reading, station, tempDir, wkbPolygon, writeChain } from './fixtures.ts';
import { writeBulkHotspots, writeParquet } from './parquet.ts';

export const CHAIN = { lastRunUtc: '2025-08-03T06:00:00Z', lastSuccessUtc: '2025-08-03T06:00:00Z', available: true, message: 'ok' };

const square = (x: number, y: number, s: number) => [[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]];

/** A small DATA_DIR with every dataset, rows on window boundaries, nulls, quoting hazards and two models. */
export async function writeSampleData(): Promise<string> {
  const dir = await tempDir();
  const p = (...parts: string[]) => path.join(dir, ...parts);
  await writeParquet(p('hotspots/date=2025-08-01/a.parquet'), hotspots, [
    hotspot('h1', '2025-08-01T00:00:00Z'),
    hotspot('h2', '2025-08-01T10:00:00Z', { country: 'ES', acq_time: '1000' }),
    hotspot('h3', '2025-08-01T23:59:59.999999Z', { country: null, confidence: 'h', version: 'with,comma "quoted"' }),
  ]);
  await writeParquet(p('hotspots/date=2025-08-02/a.parquet'), hotspots, [
    hotspot('h4', '2025-08-02T00:00:00Z', { product: 'MODIS_NRT', instrument: 'MODIS', brightness: 330.1, bright_t31: 300.2, bright_ti4: null, bright_ti5: null, confidence: '77', satellite: 'T' }),
  ]);
  await writeParquet(p('burnt-areas/month=2025-08/a.parquet'), burntAreas, [
    { id: 101, FIREDATE: '2025-08-01T00:00:00Z', LASTUPDATE: '2025-08-02T00:00:00Z', FINALDATE: null, COUNTRY: 'EL', PROVINCE: 'Attiki', COMMUNE: 'Marathon', AREA_HA: 120.5,
      BROADLEA: 10, CONIFER: 50, MIXED: 0, SCLEROPH: 30, TRANSIT: 5, OTHERNATLC: 0, AGRIAREAS: 5, ARTIFSURF: 0, OTHERLC: 0, PERCNA2K: 12.5, CLASS: '30DAYS',
      geometry: wkbPolygon([square(23.9, 38.1, 0.1), square(23.92, 38.12, 0.02)]) },
  ]);
  for (const model of ['cffdrs-era5', 'effis-ecmwf']) {
    await writeParquet(p(`fire-danger/model=${model}/month=2025-08/a.parquet`), fireDanger, [
      dangerRow('2025-08-01T00:00:00Z', model, 'country', 'PT', { FWI: model === 'cffdrs-era5' ? 20.5 : 31.25 }),
      dangerRow('2025-08-01T00:00:00Z', model, 'adminArea', 'PT11'),
      dangerRow('2025-08-02T00:00:00Z', model, 'country', 'PT'),
    ]);
  }
  await writeParquet(p('sensor-stations/stations.parquet'), sensorStations, [station('ST0001'), station('ST0002', { simulated: true, latitude: 38.5, longitude: -9.1 })]);
  await writeParquet(p('sensor-readings/date=2025-08-01/a.parquet'), sensorReadings, [
    reading('ST0001', '2025-08-01T12:00:00Z'),
    reading('ST0002', '2025-08-01T12:00:00Z', { simulated: true, fuelMoisturePct: null }),
    reading('ST0001', '2025-08-01T12:10:00Z', { airTemperatureC: 22.25 }),
  ]);
  for (const d of ['hotspots', 'burnt-areas', 'fire-danger', 'sensor-stations', 'sensor-readings']) await writeChain(dir, d, CHAIN);
  return dir;
}

/** Minimal RFC 4180 parser for assertions (handles quotes, doubled quotes and embedded separators). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(field), (field = '');
    else if (ch === '\n') row.push(field), rows.push(row), (row = []), (field = '');
    else field += ch;
  }
  if (field || row.length) row.push(field), rows.push(row);
  return rows;
}

/** A DATA_DIR with 20,000 hotspots (3 per second) on each of `days` consecutive August 2025 days from the 1st: about 2.6 MB of CSV a day. */
export async function writeBulkHotspotDays(days: number): Promise<string> {
  const dir = await tempDir();
  for (let d = 1; d <= days; d++) {
    const day = `2025-08-${String(d).padStart(2, '0')}`;
    await writeBulkHotspots(path.join(dir, `hotspots/date=${day}/a.parquet`), day, 20_000, 3);
  }
  await writeChain(dir, 'hotspots', CHAIN);
  return dir;
}
