import { mkdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burntAreas } from '../../../datasets/burnt-areas.ts';
import { fireDanger } from '../../../datasets/fire-danger.ts';
import { hotspots } from '../../../datasets/hotspots.ts';
import { sensorReadings } from '../../../datasets/sensor-readings.ts';
import { sensorStations } from '../../../datasets/sensor-stations.ts';
import { Engine } from '../../../queries/engine/engine.ts';
import { Extents, geoParquetBox } from '../../../queries/files/extent.ts';
import { readFooter } from '../../../queries/files/footer.ts';
import { footerFields } from '../../../shared/parquet/footer-fields.ts';
import { hotspot, station, tempDir } from '../../helpers/fixtures.ts';
import { writeParquet, type Row } from '../../helpers/parquet.ts';
import { square, writeWkb, type Geom } from '../sql/wkb-writer.ts';

let root: string;
let dataDir: string;
let engine: Engine;
const signal = new AbortController().signal;
const p = (...parts: string[]) => path.join(dataDir, ...parts);
const geoOf = async (file: string) => footerFields(await readFooter({ path: file, size: (await stat(file)).size, mtimeMs: 0 })).keyValues.get('geo');

const area = (id: number, geometry: Geom): Row => ({
  id, FIREDATE: '2025-08-01T00:00:00Z', LASTUPDATE: null, FINALDATE: null, COUNTRY: 'EL', PROVINCE: null, COMMUNE: null, AREA_HA: 1,
  BROADLEA: 0, CONIFER: 0, MIXED: 0, SCLEROPH: 0, TRANSIT: 0, OTHERNATLC: 0, AGRIAREAS: 0, ARTIFSURF: 0, OTHERLC: 0, PERCNA2K: 0, CLASS: '30DAYS',
  geometry: writeWkb(geometry),
});

beforeAll(async () => {
  root = await tempDir();
  dataDir = path.join(root, 'data');
  engine = await Engine.create({ dataDir, tempDir: path.join(root, 'tmp'), threads: 2, connections: 1, memoryLimit: '256MB', maxQueued: 64 });
});
afterAll(() => engine.close());

describe('Extents: the bounding box of a dataset\'s rows', () => {
  it('points: min and max of the coordinates, leaving out NaN, infinite and off-globe values; a new file grows it, a replaced one is read again', async () => {
    await writeParquet(p('hotspots/date=2025-08-01/a.parquet'), hotspots, [
      hotspot('h1', '2025-08-01T00:00:00Z', { latitude: 39.5, longitude: -8.25 }),
      hotspot('h2', '2025-08-01T01:00:00Z', { latitude: 41.0, longitude: -7.5 }),
      hotspot('h3', '2025-08-01T02:00:00Z', { latitude: 'NaN', longitude: 170 }),
      hotspot('h4', '2025-08-01T03:00:00Z', { latitude: 10, longitude: '-Infinity' }),
      hotspot('h5', '2025-08-01T04:00:00Z', { latitude: 95, longitude: 0 }),
      hotspot('h6', '2025-08-01T05:00:00Z', { latitude: null, longitude: 3 }),
    ]);
    const extents = new Extents(dataDir, engine);
    expect(await extents.of(hotspots, signal)).toEqual([-8.25, 39.5, -7.5, 41.0]);
    await writeParquet(p('hotspots/date=2025-08-02/a.parquet'), hotspots, [hotspot('h7', '2025-08-02T00:00:00Z', { latitude: -33.9, longitude: 151.2 })]);
    expect(await extents.of(hotspots, signal)).toEqual([-8.25, -33.9, 151.2, 41.0]);
    await writeParquet(p('hotspots/date=2025-08-02/a.parquet'), hotspots, [hotspot('h7', '2025-08-02T00:00:00Z', { latitude: 38, longitude: -9.5 })]);
    await utimes(p('hotspots/date=2025-08-02/a.parquet'), new Date(), new Date(Date.now() + 5000));
    expect(await extents.of(hotspots, signal)).toEqual([-9.5, 38, -7.5, 41.0]);
  });

  it('an unreadable file adds nothing and the others still count; readings take their stations\' box; a dataset without geometry has none', async () => {
    await mkdir(p('hotspots/date=2025-08-03'));
    await writeFile(p('hotspots/date=2025-08-03/broken.parquet'), 'PAR1 not really PAR1');
    await writeParquet(p('hotspots/date=2025-08-04/a.parquet'), hotspots, [hotspot('h8', '2025-08-04T00:00:00Z', { latitude: 37, longitude: -8 })]);
    const extents = new Extents(dataDir, engine);
    expect(await extents.of(hotspots, signal)).toEqual([-9.5, 37, -7.5, 41.0]);
    await rm(p('hotspots/date=2025-08-03'), { recursive: true });
    await writeParquet(p('sensor-stations/s.parquet'), sensorStations, [station('S1', { latitude: 40.1, longitude: -7.9 }), station('S2', { latitude: 38.5, longitude: -9.1 })]);
    expect(await extents.of(sensorReadings, signal)).toEqual([-9.1, 38.5, -7.9, 40.1]);
    expect(await extents.of(fireDanger, signal)).toBeNull();
    // A dataset whose folder is missing has no extent: not an error (its items say why).
    expect(await extents.of(burntAreas, signal)).toBeNull();
  });

  it('WKB: each file\'s GeoParquet bbox, or every geometry read where a file states none', async () => {
    const stated = p('burnt-areas/month=2025-08/a.parquet');
    await writeParquet(stated, burntAreas, [
      area(1, { type: 'Polygon', at: [square(23.9, 38.1, 24.0, 38.2)] }),
      area(2, { type: 'MultiPolygon', members: [{ type: 'Polygon', at: [square(-9.5, 36.9, -9.1, 37.3)] }] }),
    ]);
    expect(geoParquetBox(await geoOf(stated), 'geometry')).toEqual([-9.5, 36.9, 24.0, 38.2]);
    const extents = new Extents(dataDir, engine);
    expect(await extents.of(burntAreas, signal)).toEqual([-9.5, 36.9, 24.0, 38.2]);
    // The same rows with another polygon, in a file without GeoParquet metadata: the geometries are read.
    const bare = p('burnt-areas/month=2025-09/a.parquet');
    await writeParquet(bare.replace('a.parquet', 'tmp.bin'), burntAreas, [area(3, { type: 'Polygon', at: [square(30, 40, 31.5, 41)] }), area(4, { type: 'Point', at: [NaN, NaN] })]);
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    await c.run(`COPY (SELECT * FROM read_parquet('${bare.replace('a.parquet', 'tmp.bin')}')) TO '${bare}' (FORMAT parquet, GEOPARQUET_VERSION 'NONE')`);
    c.closeSync();
    await rm(bare.replace('a.parquet', 'tmp.bin'));
    expect(await geoOf(bare)).toBeUndefined();
    expect(await extents.of(burntAreas, signal)).toEqual([-9.5, 36.9, 31.5, 41]);
  });

  it('geoParquetBox: 2D and 3D boxes, the antimeridian, and anything else refused', () => {
    const geo = (bbox: unknown) => JSON.stringify({ columns: { geometry: { bbox } } });
    expect(geoParquetBox(geo([1, 2, 3, 4]), 'geometry')).toEqual([1, 2, 3, 4]);
    expect(geoParquetBox(geo([1, 2, -100, 3, 4, 100]), 'geometry')).toEqual([1, 2, 3, 4]);
    expect(geoParquetBox(geo([170, -10, -170, 10]), 'geometry')).toEqual([-180, -10, 180, 10]);
    for (const bad of [[1, 2, 3], [1, 2, 3, 'x'], [0, 10, 1, 5], [0, 0, 190, 1], null]) expect(geoParquetBox(geo(bad), 'geometry')).toBeNull();
    expect(geoParquetBox(geo([1, 2, 3, 4]), 'other')).toBeNull();
    expect(geoParquetBox('{not json', 'geometry')).toBeNull();
    expect(geoParquetBox(undefined, 'geometry')).toBeNull();
  });
});
