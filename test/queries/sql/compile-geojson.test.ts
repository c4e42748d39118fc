import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burntAreas } from '../../../datasets/burnt-areas.ts';
import { fireDanger } from '../../../datasets/fire-danger.ts';
import { hotspots } from '../../../datasets/hotspots.ts';
import { DATASETS, wireColumns, type DatasetDescriptor } from '../../../datasets/index.ts';
import { sensorReadings } from '../../../datasets/sensor-readings.ts';
import { sensorStations } from '../../../datasets/sensor-stations.ts';
import { compileRows, featureRows, type QuerySpec } from '../../../queries/sql/compile.ts';
import { features, FROM, HOSTILE, openFixtures, spec, SQUARE, TO } from './compile-fixtures.ts';

let instance: DuckDBInstance;
let c: DuckDBConnection;
let dataDir: string;
let files: Record<string, string[]>;
beforeAll(async () => ({ instance, c, dataDir, files } = await openFixtures()));
afterAll(() => instance.closeSync());

function run(d: DatasetDescriptor, over: Partial<QuerySpec> = {}) {
  const window = d.time ? [FROM, TO] as const : [null, null] as const;
  return features(c, compileRows({ spec: spec(d, dataDir, over), files: files[d.name]!, select: featureRows, from: window[0], to: window[1] }), d);
}

const props = (f: Record<string, unknown> | undefined) => f?.properties as Record<string, unknown>;

describe('compiled GeoJSON features', () => {
  it('hotspots: Feature with id, point geometry [lon, lat] and properties in wire column order', async () => {
    const fs = await run(hotspots);
    expect(fs.map((f) => f.id)).toEqual(['z-from', 'a', 'b', 'hostile']);
    const a = fs[1]!;
    expect(Object.keys(a)).toEqual(['type', 'id', 'geometry', 'properties']);
    expect(a.type).toBe('Feature');
    expect(a.geometry).toEqual({ type: 'Point', coordinates: [-8.25, 39.5] });
    expect(Object.keys(props(a))).toEqual(wireColumns(hotspots).map((col) => col.name));
    expect(props(a)).toMatchObject({ acquiredAtUtc: '2025-08-01T10:00:00.5Z', latitude: 39.5, brightness: null, type: null, bright_ti4: 340.5 });
  });

  it('hotspots: hostile strings survive as JSON strings, null country stays null', async () => {
    const fs = await run(hotspots);
    expect(props(fs[3])).toMatchObject({ ...HOSTILE, acquiredAtUtc: '2025-08-01T12:00:00.000001Z' });
    expect(props(fs[0]).country).toBeNull();
  });

  it('fire-danger: NaN double is null, no Feature id, null geometry, filter value bound', async () => {
    const fs = await run(fireDanger, { filters: [{ kind: 'equals' as const, column: 'level', value: 'country' }] });
    expect(fs.map((f) => props(f).areaCode)).toEqual(['ES', 'PT']);
    expect(fs[0]).not.toHaveProperty('id');
    expect(fs[0]?.geometry).toBeNull();
    expect(props(fs[0])).toMatchObject({ FWI: null, areaName: null, FFMC: 88.1, date: '2025-08-01T00:00:00Z', level: 'country' });
    expect(Object.keys(props(fs[0]))).toEqual(wireColumns(fireDanger).map((col) => col.name));
  });

  it('burnt-areas: numeric id, WKB geometry decoded, geometry column not in properties', async () => {
    const fs = await run(burntAreas);
    expect(fs.map((f) => f.id)).toEqual([7, 42]);
    expect(fs[1]?.geometry).toEqual({ type: 'Polygon', coordinates: SQUARE });
    expect(Object.keys(props(fs[1]))).toEqual(wireColumns(burntAreas).map((col) => col.name));
    expect(props(fs[1])).not.toHaveProperty('geometry');
    expect(props(fs[1])).toMatchObject({ FINALDATE: '2025-08-05T00:00:00Z', COMMUNE: 'Pombal', AREA_HA: 120.5 });
    expect(props(fs[0])).toMatchObject({ FINALDATE: null, COMMUNE: 'Vila, "Nova"', AREA_HA: null });
  });

  it('sensor-stations: id is the stationId, booleans and pre-1970 time as JSON', async () => {
    const fs = await run(sensorStations);
    expect(fs.map((f) => f.id)).toEqual(['S1', 'S1', 'S2']);
    expect(fs[2]?.geometry).toEqual({ type: 'Point', coordinates: [-7.9, 40.1] });
    expect(props(fs[2])).toMatchObject({ simulated: true, installedAtUtc: '1969-12-31T23:59:59.5Z', elevationM: 420 });
    expect(props(fs[0])).toMatchObject({ simulated: false, installedAtUtc: null, elevationM: null, name: 'Serra, "alta"' });
  });

  it('sensor-readings: station point joined (null for an unknown station), a duplicated station never multiplies rows', async () => {
    const q = compileRows({ spec: spec(sensorReadings, dataDir, { params: { series: 'corrected' }, stationFiles: files['sensor-stations']! }), files: files['sensor-readings']!, select: featureRows, from: FROM, to: TO });
    const fs = await features(c, q, sensorReadings);
    expect(fs.map((f) => [props(f).stationId, f.geometry])).toEqual([
      ['S9', null],
      ['S1', { type: 'Point', coordinates: [-7.9, 40.1] }],
      ['S2', { type: 'Point', coordinates: [-7.9, 40.1] }],
    ]);
    expect(Object.keys(props(fs[0]))).toEqual(wireColumns(sensorReadings).map((col) => col.name));
    expect(props(fs[1])).toMatchObject({ simulated: false, series: 'corrected', correctionModel: null, airTemperatureC: null });
  });
});

describe('every dataset descriptor compiles to GeoJSON that runs', () => {
  it.each(DATASETS.map((d) => [d.name, d] as const))('%s: every feature is a valid Feature with all wire properties', async (_name, d) => {
    const fs = await run(d, { params: { series: 'raw' }, stationFiles: files['sensor-stations']! });
    expect(fs.length).toBeGreaterThan(1);
    for (const f of fs) {
      expect(f.type).toBe('Feature');
      expect(Object.keys(props(f))).toEqual(wireColumns(d).map((col) => col.name));
    }
  });
});
