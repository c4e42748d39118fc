import path from 'node:path';
import { burntAreas } from '../../datasets/burnt-areas.ts';
import { fireDanger } from '../../datasets/fire-danger.ts';
import { hotspots } from '../../datasets/hotspots.ts';
import { sensorReadings } from '../../datasets/sensor-readings.ts';
import { sensorStations } from '../../datasets/sensor-stations.ts';
import { square, writeWkb, type Geom } from '../queries/sql/wkb-writer.ts';
import { dangerRow, hotspot, reading, station, tempDir, writeChain } from '../helpers/fixtures.ts';
import { writeParquet, type Row } from '../helpers/parquet.ts';
import { CHAIN } from '../helpers/sample-data.ts';

export interface Spot {
  id: string;
  at: string;
  lon: number;
  lat: number;
}

const LONS = [-10, -9.5, -9, -8.5, -8, 179.5, 180, -180, -179.5];
const LATS = [38, 38.5, 39, 39.5, 40];

/** Pixel centres on a grid that puts points on every edge and corner of the boxes the tests ask for, three per instant. */
export function spots(): Spot[] {
  const out: Spot[] = [];
  let i = 0;
  for (const lon of LONS) {
    for (const lat of LATS) {
      const minute = Math.floor(i / 3);
      const at = `2025-08-01T${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}:00Z`;
      out.push({ id: `p${String(i).padStart(3, '0')}`, at, lon, lat });
      i++;
    }
  }
  return out;
}


/** An L: [0,10]² without its upper-right quarter, so its envelope covers a quarter the polygon does not. */
const L: Geom = { type: 'Polygon', at: [[[0, 0], [10, 0], [10, 5], [5, 5], [5, 10], [0, 10], [0, 0]]] };

export const PERIMETERS: { id: number; at: string; country: string; geometry: Geom }[] = [
  { id: 1, at: '2025-08-01T01:00:00Z', country: 'PT', geometry: L },
  { id: 2, at: '2025-08-01T02:00:00Z', country: 'EL', geometry: { type: 'Polygon', at: [square(20, 20, 30, 30), square(22, 22, 28, 28)] } },
  { id: 3, at: '2025-08-01T03:00:00Z', country: 'PT', geometry: { type: 'Polygon', at: [square(9, 9, 9.5, 9.5)] } },
  {
    id: 4,
    at: '2025-08-01T04:00:00Z',
    country: 'UK',
    geometry: { type: 'MultiPolygon', members: [{ type: 'Polygon', at: [square(178, 0, 179, 1)] }, { type: 'Polygon', at: [square(-179, 0, -178, 1)] }] },
  },
  { id: 5, at: '2025-08-01T04:00:00Z', country: 'EL', geometry: { type: 'Polygon', at: [square(21, 21, 21.5, 21.5)] } },
  { id: 6, at: '2025-08-01T05:00:00Z', country: 'PT', geometry: { type: 'Polygon', at: [square(1, 1, 2, 2)] } },
];

const perimeterRow = (p: (typeof PERIMETERS)[number]): Row => ({
  id: p.id,
  FIREDATE: p.at,
  LASTUPDATE: '2025-08-02T00:00:00Z',
  FINALDATE: null,
  COUNTRY: p.country,
  PROVINCE: null,
  COMMUNE: null,
  AREA_HA: 10,
  CLASS: '30DAYS',
  geometry: writeWkb(p.geometry),
});

/** Every dataset with rows that the filters tell apart. */
export async function writeFilterData(): Promise<string> {
  const dir = await tempDir();
  const p = (...parts: string[]) => path.join(dir, ...parts);
  await writeParquet(
    p('hotspots/date=2025-08-01/a.parquet'),
    hotspots,
    spots().map((s) => hotspot(s.id, s.at, { longitude: s.lon, latitude: s.lat })),
  );
  await writeParquet(p('burnt-areas/month=2025-08/a.parquet'), burntAreas, PERIMETERS.map(perimeterRow));
  await writeParquet(p('fire-danger/model=m1/month=2025-08/a.parquet'), fireDanger, [
    dangerRow('2025-08-01T00:00:00Z', 'm1', 'country', 'PT'),
    dangerRow('2025-08-01T00:00:00Z', 'm1', 'country', 'ES'),
    dangerRow('2025-08-01T00:00:00Z', 'm1', 'adminArea', 'PT11'),
    dangerRow('2025-08-01T00:00:00Z', 'm1', 'adminArea', 'PT15'),
  ]);
  await writeParquet(p('sensor-stations/a.parquet'), sensorStations, [station('S1'), station('S2', { simulated: true }), station('S3')]);
  const readings: Row[] = [];
  for (let m = 0; m < 6; m++) {
    const at = `2025-08-01T00:${m}0:00Z`;
    readings.push(reading('S1', at), reading('S2', at, { simulated: true }), reading('S3', at));
  }
  await writeParquet(p('sensor-readings/date=2025-08-01/a.parquet'), sensorReadings, readings);
  for (const d of ['hotspots', 'burnt-areas', 'fire-danger', 'sensor-stations', 'sensor-readings']) await writeChain(dir, d, CHAIN);
  return dir;
}
