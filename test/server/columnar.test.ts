import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS, type DatasetDescriptor } from '../../datasets/index.ts';
import { wkbToGeoJson } from '../../queries/sql/wkb.ts';
import { ARROW, arrowTable, csvRows, duckdbParquet, fetchBytes, hyparquetKeyValues, hyparquetRows, objectRows, PARQUET } from '../helpers/columnar.ts';
import { tempDir } from '../helpers/fixtures.ts';
import { writeSampleData } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let scratch: string;
beforeAll(async () => {
  server = await startServer(await writeSampleData());
  scratch = await tempDir('fire-api-columnar-');
});
afterAll(() => server.close());

const QUERIES: Record<string, string> = {
  hotspots: 'from=2025-08-01&to=2025-08-03',
  'burnt-areas': 'from=2025-08-01&to=2025-09-01',
  'fire-danger': 'from=2025-08-01&to=2025-08-03',
  'sensor-stations': '',
  'sensor-readings': 'from=2025-08-01&to=2025-08-02&series=corrected',
};
const url = (d: DatasetDescriptor, extra = '') => `/api/v1/${d.name}?${[QUERIES[d.name], extra].filter(Boolean).join('&')}`;
const csvOf = async (d: DatasetDescriptor) => csvRows(d, await (await server.get(url(d, 'format=csv'))).text());
const geojsonGeometries = async (d: DatasetDescriptor) =>
  ((await (await server.get(url(d))).json()) as { features: { geometry: unknown }[] }).features.map((f) => f.geometry);

describe('Parquet by Accept holds the CSV rows with their types', () => {
  it.each(DATASETS.map((d) => [d.name, d] as const))('%s read back by hyparquet and by DuckDB equals the CSV rows, in order', async (_name, d) => {
    const csv = await csvOf(d);
    expect(csv.length).toBeGreaterThan(0);
    const r = await fetchBytes(server.get, url(d), PARQUET);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(PARQUET);
    expect(r.bytes.subarray(0, 4).toString()).toBe('PAR1');
    expect(objectRows(d, await hyparquetRows(r.bytes))).toEqual(csv);
    const duck = await duckdbParquet(scratch, r.bytes);
    expect(objectRows(d, duck.rows)).toEqual(csv);
    for (const c of d.columns.filter((c) => c.type !== 'GEOMETRY')) expect(duck.types[c.name]).toBe(c.type === 'TIMESTAMPTZ' ? 'TIMESTAMP WITH TIME ZONE' : c.type);
  });

  it('timestamps are UTC instants, not text (a row at 23:59:59.999999 keeps its microseconds)', async () => {
    const d = DATASETS.find((x) => x.name === 'hotspots')!;
    const rows = await hyparquetRows((await fetchBytes(server.get, url(d), PARQUET)).bytes);
    expect(rows.map((r) => r.acquiredAtUtc)).toContain(1754092799999999n);
  });

  it('hotspots and burnt-areas carry GeoParquet 1.1 geometry: geo metadata with the bbox, WKB equal to the GeoJSON geometry', async () => {
    for (const name of ['hotspots', 'burnt-areas']) {
      const d = DATASETS.find((x) => x.name === name)!;
      const bytes = (await fetchBytes(server.get, url(d), PARQUET)).bytes;
      const geo = JSON.parse(hyparquetKeyValues(bytes).geo!) as { version: string; primary_column: string; columns: Record<string, { encoding: string; bbox: number[]; geometry_types: string[]; crs?: unknown }> };
      expect(geo.version).toBe('1.1.0');
      expect(geo.primary_column).toBe('geometry');
      const column = geo.columns.geometry!;
      expect(column.encoding).toBe('WKB');
      expect(column.crs).toBeUndefined(); // absent means OGC:CRS84
      const geometries = await geojsonGeometries(d);
      expect((await hyparquetRows(bytes)).map((r) => r.geometry)).toEqual(geometries);
      const coords = JSON.stringify(geometries).match(/-?\d+(\.\d+)?(e[-+]?\d+)?(?=[,\]])/g)!.map(Number);
      const xs = coords.filter((_, i) => i % 2 === 0);
      const ys = coords.filter((_, i) => i % 2 === 1);
      expect(column.bbox).toEqual([Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)]);
      expect(column.geometry_types).toEqual(name === 'hotspots' ? ['Point'] : ['Polygon']);
      const duck = await duckdbParquet(scratch, bytes);
      expect(duck.types.geometry).toMatch(/^GEOMETRY/);
    }
  });

  it('the same request a second later gives the same file: the chain age, which moves with the clock, is left out of the file\'s meta', async () => {
    const d = DATASETS.find((x) => x.name === 'hotspots')!;
    const geojson = (await (await server.get(url(d))).json()) as { meta: { observation: { ageSeconds: number | null } } };
    expect(geojson.meta.observation.ageSeconds).toBeGreaterThan(0);
    for (const accept of [PARQUET, ARROW]) {
      const first = (await fetchBytes(server.get, url(d), accept)).bytes;
      // Past the next whole second: ageSeconds has moved.
      await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));
      const second = (await fetchBytes(server.get, url(d), accept)).bytes;
      expect(second.equals(first), accept).toBe(true);
      const meta = accept === PARQUET ? hyparquetKeyValues(first)['fire_api:meta']! : arrowTable(d, first).metadata['fire_api:meta']!;
      expect(JSON.parse(meta).observation).toEqual({ chainRan: true, lastSuccessUtc: '2025-08-03T06:00:00Z' });
    }
  });

  it('meta is in the key-value metadata, and the X- headers are those of CSV', async () => {
    const d = DATASETS.find((x) => x.name === 'hotspots')!;
    const r = await fetchBytes(server.get, url(d), PARQUET);
    const csv = await server.get(url(d, 'format=csv'));
    const meta = JSON.parse(hyparquetKeyValues(r.bytes)['fire_api:meta']!) as { returned: number; dataset: string; truncated: boolean };
    expect(meta).toMatchObject({ dataset: 'hotspots', returned: 4, truncated: false });
    for (const h of ['x-returned', 'x-truncated', 'x-data-version', 'x-query', 'x-window-from', 'x-window-to', 'x-row-limit']) expect(r.headers.get(h)).toBe(csv.headers.get(h));
  });
});

describe('Arrow IPC stream by Accept holds the CSV rows with their types', () => {
  it.each(DATASETS.map((d) => [d.name, d] as const))('%s read back by apache-arrow equals the CSV rows, meta in the schema metadata', async (_name, d) => {
    const csv = await csvOf(d);
    const r = await fetchBytes(server.get, url(d), ARROW);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(ARROW);
    const { rows, metadata, table } = arrowTable(d, r.bytes);
    expect(objectRows(d, rows)).toEqual(csv);
    expect(JSON.parse(metadata['fire_api:meta']!)).toMatchObject({ dataset: d.name, returned: csv.length });
    expect(r.headers.get('x-returned')).toBe(String(csv.length));
    const geometry = table.schema.fields.find((f) => f.name === 'geometry');
    if (d.geometry.kind === 'point' || d.geometry.kind === 'wkb') {
      expect(geometry?.metadata.get('ARROW:extension:name')).toBe('geoarrow.wkb');
      const wkb = table.getChild('geometry')!.toArray() as Uint8Array[];
      expect(wkb.map((g) => JSON.parse(wkbToGeoJson(g)))).toEqual(await geojsonGeometries(d));
    } else expect(geometry).toBeUndefined();
  });
});

describe('negotiation keeps v1 as it was', () => {
  const d = DATASETS.find((x) => x.name === 'hotspots')!;
  it('format=csv wins over a columnar Accept', async () => {
    for (const accept of [PARQUET, ARROW]) {
      const r = await server.get(url(d, 'format=csv'), { headers: { accept } });
      expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect((await r.text()).startsWith('id,product')).toBe(true);
    }
  });

  it('any other Accept, or a columnar type ranked below another, is GeoJSON byte for byte', async () => {
    const plain = (await fetchBytes(server.get, url(d))).bytes.toString().replace(/"ageSeconds":\d+/, '');
    for (const accept of ['*/*', 'text/csv', 'application/json', `application/geo+json, ${PARQUET};q=0.5`, `${PARQUET};q=0`]) {
      const r = await fetchBytes(server.get, url(d), accept);
      expect(r.headers.get('content-type')).toBe('application/geo+json');
      expect(r.bytes.toString().replace(/"ageSeconds":\d+/, '')).toBe(plain);
    }
    expect((await fetchBytes(server.get, url(d), `text/html;q=0.9, ${ARROW}`)).headers.get('content-type')).toBe(ARROW);
  });

  it('Vary names Accept, Accept-Encoding and Authorization; the ETag differs per media type and each revalidates to 304', async () => {
    const tags = new Set<string>();
    for (const accept of [PARQUET, ARROW, 'application/geo+json']) {
      const r = await server.get(url(d), { headers: { accept } });
      await r.arrayBuffer();
      expect(r.headers.get('vary')).toBe('Accept, Accept-Encoding, Authorization');
      const etag = r.headers.get('etag')!;
      tags.add(etag);
      const again = await server.get(url(d), { headers: { accept, 'if-none-match': etag } });
      expect(again.status).toBe(304);
      expect(again.headers.get('vary')).toBe('Accept, Accept-Encoding, Authorization');
    }
    expect(tags.size).toBe(3);
  });

  it('errors stay problem+json whatever Accept asks for', async () => {
    const r = await server.get('/api/v1/hotspots?from=nonsense', { headers: { accept: PARQUET } });
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('an empty window is a valid file with the columns and no rows', async () => {
    const empty = '/api/v1/hotspots?from=2025-07-01&to=2025-07-02';
    const p = await fetchBytes(server.get, empty, PARQUET);
    expect(p.headers.get('x-returned')).toBe('0');
    expect(await hyparquetRows(p.bytes)).toEqual([]);
    const duck = await duckdbParquet(scratch, p.bytes);
    expect(Object.keys(duck.types)).toEqual([...d.columns.map((c) => c.name), 'geometry']);
    const a = arrowTable(d, (await fetchBytes(server.get, empty, ARROW)).bytes);
    expect(a.rows).toEqual([]);
    expect(a.table.schema.fields.map((f) => f.name)).toEqual([...d.columns.map((c) => c.name), 'geometry']);
  });
});
