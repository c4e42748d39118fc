import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burntAreas } from '../../datasets/burnt-areas.ts';
import { fireDanger } from '../../datasets/fire-danger.ts';
import { sensorReadings } from '../../datasets/sensor-readings.ts';
import { fireApi } from '../helpers/cli.ts';
import { tempDir } from '../helpers/fixtures.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { writePolygonShapefile, type DbfField } from '../helpers/shapefile.ts';
import { allFiles, checkPartition } from './ops-fixtures.ts';

const COVER = ['BROADLEA', 'CONIFER', 'MIXED', 'SCLEROPH', 'TRANSIT', 'OTHERNATLC', 'AGRIAREAS', 'ARTIFSURF', 'OTHERLC', 'PERCNA2K'];
const attributes = (id: number, FIREDATE: string, COMMUNE: string) => ({
  id, FIREDATE, LASTUPDATE: '2026-07-20 12:30:00', FINALDATE: null, COUNTRY: 'PT', PROVINCE: 'Leiria', COMMUNE, AREA_HA: 250.5,
  ...Object.fromEntries(COVER.map((k, i) => [k, i * 2.5])), CLASS: 'FireSeason',
});
// Counter-clockwise outer ring and a hole, as GeoJSON has them.
const SQUARE = [[[-8.3, 39.9], [-8.2, 39.9], [-8.2, 40.0], [-8.3, 40.0], [-8.3, 39.9]], [[-8.26, 39.94], [-8.26, 39.96], [-8.24, 39.96], [-8.24, 39.94], [-8.26, 39.94]]];
// Clockwise, as shapefiles store outer rings.
const CLOCKWISE = [[[-7.5, 40.1], [-7.5, 40.2], [-7.4, 40.2], [-7.4, 40.1], [-7.5, 40.1]]];
const FIELDS: DbfField[] = [
  { name: 'id', type: 'N', length: 10 }, { name: 'FIREDATE', type: 'D', length: 8 }, { name: 'LASTUPDATE', type: 'C', length: 19 },
  { name: 'FINALDATE', type: 'C', length: 19 }, { name: 'COUNTRY', type: 'C', length: 2 }, { name: 'PROVINCE', type: 'C', length: 30 },
  { name: 'COMMUNE', type: 'C', length: 30 }, { name: 'AREA_HA', type: 'N', length: 12, decimals: 2 },
  ...COVER.map((name): DbfField => ({ name, type: 'N', length: 8, decimals: 2 })), { name: 'CLASS', type: 'C', length: 12 },
];

let dir: string;
let dataDir: string;
let server: TestServer;
const ingest = (dataset: string, ...args: string[]) => fireApi(['ingest', dataset, '--data-dir', dataDir, ...args]);
const write = async (name: string, text: string) => {
  await writeFile(path.join(dir, name), text);
  return path.join(dir, name);
};

beforeAll(async () => {
  dir = await tempDir('fire-api-sources-');
  dataDir = path.join(dir, 'data');
  const geojson = { type: 'FeatureCollection', features: [{ type: 'Feature', properties: attributes(9001, '2026-07-18', 'Pombal'), geometry: { type: 'Polygon', coordinates: SQUARE } }] };
  const fromGeoJson = await ingest('burnt-areas', await write('effis.geojson', JSON.stringify(geojson)));
  expect(fromGeoJson.code, fromGeoJson.stderr).toBe(0);
  await writePolygonShapefile(path.join(dir, 'effis'), FIELDS, [{ rings: CLOCKWISE, attributes: { ...attributes(9002, '20260719', 'Pedrógão Grande'), FIREDATE: '20260719' } }]);
  const fromShapefile = await ingest('burnt-areas', path.join(dir, 'effis.shp'));
  expect(fromShapefile.code, fromShapefile.stderr).toBe(0);
  server = await startServer(dataDir);
});
afterAll(() => server?.close());

describe('fire-api ingest burnt-areas (EFFIS GeoJSON and shapefile)', () => {
  it('serves both perimeters with their attributes and geometry, holes kept, stored as GeoParquet the server checks as in order', async () => {
    const body = (await (await server.get('/api/v1/burnt-areas?from=2026-07-01&to=2026-08-01')).json()) as { features: { id: number; geometry: unknown; properties: Record<string, unknown> }[] };
    expect(body.features.map((f) => f.id)).toEqual([9001, 9002]);
    expect(body.features[0]!.geometry).toEqual({ type: 'Polygon', coordinates: SQUARE });
    expect(body.features[1]!.geometry).toEqual({ type: 'Polygon', coordinates: CLOCKWISE });
    expect(body.features[0]!.properties).toMatchObject({ FIREDATE: '2026-07-18T00:00:00Z', LASTUPDATE: '2026-07-20T12:30:00Z', FINALDATE: null, COMMUNE: 'Pombal', AREA_HA: 250.5, CONIFER: 2.5, PERCNA2K: 22.5 });
    expect(body.features[1]!.properties).toMatchObject({ FIREDATE: '2026-07-19T00:00:00Z', COMMUNE: 'Pedrógão Grande', CLASS: 'FireSeason' });
    const verdicts = await checkPartition(dataDir, burntAreas, 'month=2026-07');
    expect(verdicts).toEqual([expect.objectContaining({ ok: true, sorted: true }), expect.objectContaining({ ok: true, sorted: true })]);
  }, 120_000);

  it('reports a feature without a polygon by its number and adds nothing for perimeters already present', async () => {
    const collection = { type: 'FeatureCollection', features: [
      { type: 'Feature', properties: attributes(9001, '2026-07-18', 'Pombal'), geometry: { type: 'Polygon', coordinates: SQUARE } },
      { type: 'Feature', properties: attributes(9003, '2026-07-21', 'Leiria'), geometry: { type: 'Point', coordinates: [-8, 40] } },
    ] };
    const file = await write('mixed.geojson', JSON.stringify(collection));
    const r = await ingest('burnt-areas', file);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}:2: geometry: Point, expected a Polygon or MultiPolygon`);
    const skipped = await ingest('burnt-areas', '--skip-bad-rows', file);
    expect(skipped.stdout).toMatch(/1 already present; wrote 0 rows in 0 files/);
  }, 120_000);
});

describe('fire-api ingest from CSV with the contract column names', () => {
  it('writes fire danger under model=.../month=..., one file per month, and refuses a level outside country/adminArea', async () => {
    const header = 'date,model,level,areaCode,areaName,FWI,FFMC,DMC,DC,ISI,BUI,DSR';
    const rows = ['2026-06-30,fwi-era5,country,PT,Portugal,20.5,90.1,40,300,8.5,60,5.2', '2026-07-01,fwi-era5,adminArea,PT16,"Centro, PT",25,91,45,310,9,65,6', '2026-07-01T00:00:00Z,fwi-era5,country,ES,España,18,88,35,280,7,55,4'];
    const bad = await ingest('fire-danger', await write('bad-danger.csv', `${header}\n2026-07-02,fwi-era5,region,PT,,1,1,1,1,1,1,1\n`));
    expect(bad.stderr).toMatch(/bad-danger\.csv:2: level: 'region' is not one of country, adminArea/);
    const r = await ingest('fire-danger', await write('danger.csv', `${header}\n${rows.join('\n')}\n`));
    expect(r.code, r.stderr).toBe(0);
    expect(await allFiles(path.join(dataDir, 'fire-danger'))).toEqual([expect.stringMatching(/^model=fwi-era5\/month=2026-06\/ingest-.*\.parquet$/), expect.stringMatching(/^model=fwi-era5\/month=2026-07\/ingest-.*\.parquet$/)]);
    expect(await checkPartition(dataDir, fireDanger, 'model=fwi-era5/month=2026-07')).toEqual([expect.objectContaining({ ok: true, sorted: true })]);
    const csv = await (await server.get('/api/v1/fire-danger?from=2026-06-01&to=2026-08-01&level=adminArea&format=csv')).text();
    expect(csv.split('\n')[1]).toBe('2026-07-01T00:00:00Z,fwi-era5,adminArea,PT16,"Centro, PT",25,91,45,310,9,65,6');
  }, 120_000);

  it('writes sensor stations and readings; readings already present by (measuredAtUtc, stationId) are not written again', async () => {
    const stations = await ingest('sensor-stations', await write('stations.csv', 'stationId,name,latitude,longitude,elevationM,simulated,installedAtUtc\nS1,Lousã,40.1,-8.2,200,false,2024-01-01T00:00:00Z\nSIM1,Sim,40,-8,,true,\n'));
    expect(stations.code, stations.stderr).toBe(0);
    const header = 'stationId,measuredAtUtc,simulated,airTemperatureC,relativeHumidityPct,windSpeedMs,windGustMs,windDirectionDeg,precipitationMm,fuelMoisturePct';
    const readings = ['S1,2026-07-01T00:10:00Z,false,21.5,40,3,5,270,0,11', 'S1,2026-07-01T00:00:00Z,false,21,41,3,5,270,0,', 'SIM1,2026-07-01T00:00:00Z,true,20,,,,,,'];
    expect((await ingest('sensor-readings', await write('readings.csv', `${header}\n${readings.join('\n')}\n`))).code).toBe(0);
    const again = await ingest('sensor-readings', await write('readings2.csv', `${header}\n${readings[0]}\nS1,2026-07-01T00:20:00Z,false,22,39,3,5,270,0,11\n`));
    expect(again.stdout).toMatch(/1 already present; wrote 1 rows in 1 files/);
    expect((await checkPartition(dataDir, sensorReadings, 'date=2026-07-01')).every((v) => v.ok && v.sorted)).toBe(true);
    const csv = (await (await server.get('/api/v1/sensor-readings?from=2026-07-01&to=2026-07-02&format=csv')).text()).trim().split('\n');
    expect(csv.slice(1).map((line) => line.split(',').slice(0, 3).join(','))).toEqual(['S1,2026-07-01T00:00:00Z,false', 'SIM1,2026-07-01T00:00:00Z,true', 'S1,2026-07-01T00:10:00Z,false', 'S1,2026-07-01T00:20:00Z,false']);
    expect(csv[1]).toBe('S1,2026-07-01T00:00:00Z,false,raw,,21,41,3,5,270,0,');
  }, 120_000);
});
