import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burntAreas } from '../../../datasets/burnt-areas.ts';
import { hotspots } from '../../../datasets/hotspots.ts';
import { sensorStations } from '../../../datasets/sensor-stations.ts';
import { compileRows, compileShapeCandidates, csvRows } from '../../../queries/sql/compile.ts';
import type { RowFilter } from '../../../queries/sql/filter-sql.ts';
import { resolveShapes } from '../../../queries/sql/shape-filter.ts';
import { FROM, TO, openFixtures, rows, spec } from './compile-fixtures.ts';

let instance: DuckDBInstance;
let c: DuckDBConnection;
let dataDir: string;
let files: Record<string, string[]>;
beforeAll(async () => {
  ({ instance, c, dataDir, files } = await openFixtures());
});
afterAll(() => instance.closeSync());

const box = (minLon: number, minLat: number, maxLon: number, maxLat: number): RowFilter => ({ kind: 'box', box: { minLon, minLat, maxLon, maxLat }, shapes: null });

describe('compiled filters: values bound, identifiers from the descriptor', () => {
  it('a box on points binds its four numbers; a box shrunk to the point itself still keeps it (edges included)', async () => {
    const q = compileRows({ spec: spec(hotspots, dataDir, { filters: [box(-8.25, 39.5, -8.25, 39.5)] }), files: files.hotspots!, select: csvRows, from: FROM, to: TO });
    expect(q.sql).not.toMatch(/8\.25|39\.5/);
    expect(q.params).toEqual(expect.arrayContaining(['-8.25', '39.5']));
    expect(await rows(c, q)).toHaveLength(4);
    const outside = compileRows({ spec: spec(hotspots, dataDir, { filters: [box(-8.24, 39.5, -8, 40)] }), files: files.hotspots!, select: csvRows, from: FROM, to: TO });
    expect(await rows(c, outside)).toHaveLength(0);
  });

  it('simulated is compared as a boolean and stationId as a bound list', async () => {
    const simulated = compileRows({ spec: spec(sensorStations, dataDir, { filters: [{ kind: 'equals', column: 'simulated', value: 'true' }] }), files: files['sensor-stations']!, select: csvRows, from: null, to: null });
    expect(simulated.sql).toContain('"simulated" = CAST($1 AS BOOLEAN)');
    expect((await rows(c, simulated)).map((r) => r[0])).toEqual(['S2']);
    const ids = compileRows({ spec: spec(sensorStations, dataDir, { filters: [{ kind: 'anyOf', column: 'stationId', values: ['S1', "x' OR 1=1 --"] }] }), files: files['sensor-stations']!, select: csvRows, from: null, to: null });
    expect(ids.params).toEqual(['S1', "x' OR 1=1 --"]);
    expect((await rows(c, ids)).map((r) => r[0])).toEqual(['S1', 'S1']);
  });

  it('a box on perimeters: envelope candidates first, then only the shapes that meet it go into the SQL', async () => {
    const s = spec(burntAreas, dataDir, { filters: [box(10.5, 40.5, 12, 42)] });
    expect(await rows(c, compileShapeCandidates(s, files['burnt-areas']!, FROM, TO))).toHaveLength(1); // three rows, one shape
    const resolved = await resolveShapes(c, s, files['burnt-areas']!, { from: FROM, to: TO });
    expect(resolved.filters).toEqual([{ ...s.filters[0], shapes: [expect.stringMatching(/^[0-9a-f]{32}$/)] }]);
    const q = compileRows({ spec: resolved, files: files['burnt-areas']!, select: csvRows, from: FROM, to: TO });
    expect((await rows(c, q)).map((r) => r[0])).toEqual([7n, 42n]);
    const none = await resolveShapes(c, spec(burntAreas, dataDir, { filters: [box(11.5, 41.5, 12, 42)] }), files['burnt-areas']!, { from: FROM, to: TO });
    expect(await rows(c, compileRows({ spec: none, files: files['burnt-areas']!, select: csvRows, from: FROM, to: TO }))).toHaveLength(0);
  });
});
