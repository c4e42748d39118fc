import path from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wkbToGeoJson } from '../../../queries/sql/wkb.ts';
import { writeAggregateData } from '../../helpers/aggregate-data.ts';
import { ARROW, duckdbParquet, fetchBytes, hyparquetKeyValues, hyparquetRows, PARQUET } from '../../helpers/columnar.ts';
import { tempDir, writeChain } from '../../helpers/fixtures.ts';
import { writeSpreadHotspots } from '../../helpers/parquet.ts';
import { CHAIN, parseCsv } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

type Geometry = { type: 'Point'; coordinates: number[] } | { type: 'Polygon'; coordinates: number[][][] } | null;
type Geo = { version: string; primary_column: string; columns: Record<string, { encoding: string; geometry_types: string[]; bbox?: number[]; crs?: unknown }> };

let server: TestServer;
let scratch: string;
beforeAll(async () => {
  server = await startServer(await writeAggregateData());
  scratch = await tempDir('fire-api-aggregate-geometry-');
}, 60_000);
afterAll(() => server.close());

/** Grid cells (some of positions outside the grid: the null cell), and stations (ST0099 is not in the registry). */
const WITH_GEOMETRY = {
  grid: '/api/v1/hotspots/aggregate?from=2024-01-01&to=2025-02-01&interval=month&groupBy=country,grid&cell=0.25&stats=frp.sum',
  stations: '/api/v1/sensor-readings/aggregate?from=2024-02-29T22:00:00Z&to=2024-03-01T02:00:00Z&interval=hour&groupBy=stationId&stats=airTemperatureC.mean',
};

const geojsonGeometries = async (url: string) => ((await (await server.get(url)).json()) as { features: { geometry: Geometry }[] }).features.map((f) => f.geometry);
const csvHeader = async (url: string) => parseCsv(await (await server.get(`${url}&format=csv`)).text())[0]!;

/** The positions of a geometry, in order. */
const positions = (g: NonNullable<Geometry>): number[][] => (g.type === 'Point' ? [g.coordinates] : g.coordinates.flat());

/** A WKT text (DuckDB's ST_AsText) as GeoJSON: its type and its numbers in pairs, the polygon's one ring. */
function wktGeometry(wkt: string | null): Geometry {
  if (wkt === null) return null;
  const numbers = wkt.match(/-?\d+(\.\d+)?(e[-+]?\d+)?/gi)!.map(Number);
  const pairs = numbers.flatMap((n, i) => (i % 2 ? [] : [[n, numbers[i + 1]!]]));
  if (wkt.startsWith('POINT ')) return { type: 'Point', coordinates: pairs[0]! };
  expect(wkt).toMatch(/^POLYGON \(\([^()]*\)\)$/);
  return { type: 'Polygon', coordinates: [pairs] };
}

/** GeoParquet's bbox of the geometries: [minX, minY, maxX, maxY]. */
function bboxOf(geometries: readonly Geometry[]): number[] {
  const all = geometries.flatMap((g) => (g ? positions(g) : []));
  const [xs, ys] = [all.map((p) => p[0]!), all.map((p) => p[1]!)];
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

describe('aggregate Parquet and Arrow carry the groups\' geometry when they have one', () => {
  it.each(Object.entries(WITH_GEOMETRY))('%s: Parquet read by hyparquet and DuckDB, Arrow by apache-arrow, give the GeoJSON answer\'s geometry', async (kind, url) => {
    const expected = await geojsonGeometries(url);
    expect(expected.some((g) => g === null)).toBe(true);
    expect(expected.filter((g) => g !== null).length).toBeGreaterThan(1);
    const header = await csvHeader(url);

    const parquet = await fetchBytes(server.get, url, PARQUET);
    expect(parquet.status).toBe(200);
    expect((await hyparquetRows(parquet.bytes)).map((r) => r.geometry ?? null)).toEqual(expected);
    const geo = JSON.parse(hyparquetKeyValues(parquet.bytes).geo!) as Geo;
    expect(geo).toMatchObject({ version: '1.1.0', primary_column: 'geometry' });
    expect(geo.columns.geometry).toEqual({ encoding: 'WKB', geometry_types: [kind === 'grid' ? 'Polygon' : 'Point'], bbox: bboxOf(expected) });
    const duck = await duckdbParquet(scratch, parquet.bytes);
    expect(Object.keys(duck.types)).toEqual([...header, 'geometry']);
    expect(duck.types.geometry).toMatch(/^GEOMETRY/);
    expect(duck.rows.map((r) => wktGeometry(r.geometry_wkt as string | null))).toEqual(expected);

    const arrow = await fetchBytes(server.get, url, ARROW);
    const table = tableFromIPC(arrow.bytes);
    expect(table.schema.fields.map((f) => f.name)).toEqual([...header, 'geometry']);
    const field = table.schema.fields.at(-1)!;
    expect([String(field.type), field.nullable, field.metadata.get('ARROW:extension:name')]).toEqual(['Binary', true, 'geoarrow.wkb']);
    expect(JSON.parse(field.metadata.get('ARROW:extension:metadata')!)).toEqual({ crs: 'OGC:CRS84', crs_type: 'authority_code' });
    const column = table.getChild('geometry')!;
    expect(Array.from({ length: table.numRows }, (_, i) => JSON.parse(wkbToGeoJson(column.get(i) as Uint8Array | null)) as Geometry)).toEqual(expected);
  });

  it('an Arrow answer kept in the aggregate cache keeps its geometry: the same bytes fresh and from the cache', async () => {
    const cached = await startServer(await writeAggregateData());
    try {
      const cache = cached.context.extract.aggregateCache!;
      for (const url of Object.values(WITH_GEOMETRY)) {
        const arrow = async () => (await fetchBytes(cached.get, url, ARROW)).bytes;
        // Kept when first computed: the second comes from the cache.
        const fresh = await arrow();
        const hits = cache.hits;
        expect((await arrow()).equals(fresh)).toBe(true);
        expect(cache.hits).toBe(hits + 1);
        expect(tableFromIPC(fresh).getChild('geometry')!.nullCount).toBeLessThan(tableFromIPC(fresh).numRows);
      }
    } finally {
      await cached.close();
    }
  });

  it('an answer with no groups still has the geometry column, and no bbox', async () => {
    const url = '/api/v1/hotspots/aggregate?from=2023-01-01&to=2023-02-01&groupBy=grid&cell=1';
    const parquet = await fetchBytes(server.get, url, PARQUET);
    expect(await hyparquetRows(parquet.bytes)).toEqual([]);
    expect((JSON.parse(hyparquetKeyValues(parquet.bytes).geo!) as Geo).columns.geometry).toEqual({ encoding: 'WKB', geometry_types: [] });
    expect(Object.keys((await duckdbParquet(scratch, parquet.bytes)).types)).toEqual(['bucket', 'cellLon', 'cellLat', 'count', 'geometry']);
    const table = tableFromIPC((await fetchBytes(server.get, url, ARROW)).bytes);
    expect([table.numRows, table.schema.fields.at(-1)!.name]).toEqual([0, 'geometry']);
  });

  it('without a grid or station key there is no geometry column and no geo metadata', async () => {
    for (const url of ['/api/v1/hotspots/aggregate?from=2024-01-01&to=2025-02-01&groupBy=country', '/api/v1/burnt-areas/aggregate?from=2024-01-01&to=2024-04-01&groupBy=COUNTRY&stats=AREA_HA.sum', '/api/v1/sensor-readings/aggregate?from=2024-02-29&to=2024-03-02']) {
      const header = await csvHeader(url);
      const parquet = await fetchBytes(server.get, url, PARQUET);
      expect(hyparquetKeyValues(parquet.bytes).geo).toBeUndefined();
      expect(Object.keys((await duckdbParquet(scratch, parquet.bytes)).types)).toEqual(header);
      expect(tableFromIPC((await fetchBytes(server.get, url, ARROW)).bytes).schema.fields.map((f) => f.name)).toEqual(header);
    }
  });
});

describe('geometry answers are byte-identical however they are computed', () => {
  it('60,000 cells of 0.01°: the same Parquet and Arrow bytes with DUCKDB_THREADS 1 and 4, every cell a polygon', async () => {
    const dir = await tempDir();
    await writeSpreadHotspots(path.join(dir, 'hotspots/date=2025-08-01/a.parquet'), '2025-08-01', 60_000);
    await writeChain(dir, 'hotspots', CHAIN);
    const url = '/api/v1/hotspots/aggregate?from=2025-08-01&to=2025-08-02&interval=all&groupBy=grid&cell=0.01&stats=frp.sum';
    const answers = async (threads: string) => {
      const s = await startServer(dir, { DUCKDB_THREADS: threads, AGGREGATE_CACHE_MB: '0' });
      try {
        return [(await fetchBytes(s.get, url, PARQUET)).bytes, (await fetchBytes(s.get, url, ARROW)).bytes];
      } finally {
        await s.close();
      }
    };
    const [one, four] = [await answers('1'), await answers('4')];
    expect(four[0]!.equals(one[0]!) && four[1]!.equals(one[1]!)).toBe(true);
    const geometry = tableFromIPC(one[1]!).getChild('geometry')!;
    expect([geometry.length, geometry.nullCount]).toEqual([60_000, 0]);
    expect((await hyparquetRows(one[0]!)).filter((r) => (r.geometry as { type?: string }).type === 'Polygon')).toHaveLength(60_000);
  }, 120_000);
});
