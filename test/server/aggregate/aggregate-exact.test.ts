import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeAggregateData } from '../../helpers/aggregate-data.ts';
import { exactMean, exactSum } from '../../helpers/exact.ts';
import { parseCsv } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

/**
 * Every group of an aggregate against the test's own grouping of the rows the data endpoint
 * returns for the same window and filters: buckets from calendar arithmetic, cells by searching
 * the edges, sums and means exact (helpers/exact.ts), order by bucket then keys, nulls last.
 */

let server: TestServer;
let dataDir: string;
beforeAll(async () => {
  dataDir = await writeAggregateData();
  server = await startServer(dataDir);
}, 60_000);
afterAll(() => server.close());

const TIME: Record<string, string> = { hotspots: 'acquiredAtUtc', 'burnt-areas': 'FIREDATE', 'fire-danger': 'date', 'sensor-readings': 'measuredAtUtc' };
const AGGREGATE_PARAMS = ['interval', 'groupBy', 'cell', 'stats'];
type Value = string | number | null;

async function csvObjects(url: string): Promise<{ header: string[]; rows: Record<string, string>[] }> {
  const r = await server.get(url);
  expect(r.status, url).toBe(200);
  const [header, ...rows] = parseCsv(await r.text());
  return { header: header!, rows: rows.map((row) => Object.fromEntries(header!.map((h, i) => [h, row[i]!]))) };
}

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

function bucketOf(t: string, interval: string, from: string): string {
  const ms = Date.parse(t);
  const d = new Date(ms);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (interval === 'hour') return iso(Math.floor(ms / 3_600_000) * 3_600_000);
  if (interval === 'day') return iso(day);
  if (interval === 'week') return iso(day - ((d.getUTCDay() + 6) % 7) * 86_400_000);
  if (interval === 'month') return iso(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
  if (interval === 'year') return iso(Date.UTC(d.getUTCFullYear(), 0, 1));
  return iso(Date.parse(from));
}

/** The cell's south-west corner by searching edges (index × size from the origin, one division): the largest edge at or below the value. */
function cellCorner(v: number, origin: number, size: number): number | null {
  const hundredths = Math.round(size * 100);
  const edge = (i: number) => (i * hundredths + origin * 100) / 100;
  const last = (-origin * 200) / hundredths - 1;
  let i = Math.max(0, Math.floor((v - origin) / size) - 2);
  while (i < last && edge(i + 1) <= v) i++;
  return edge(i);
}

function keyValues(row: Record<string, string>, keys: string[], cell: number): Value[] {
  return keys.flatMap((k): Value[] => {
    if (k !== 'grid') return [row[k] === '' ? null : row[k]!];
    const [lon, lat] = [Number(row.longitude), Number(row.latitude)];
    if (!(Math.abs(lon) <= 180 && Math.abs(lat) <= 90)) return [null, null];
    return [cellCorner(lon, -180, cell), cellCorner(lat, -90, cell)];
  });
}

function statValue(stat: string, rows: Record<string, string>[]): number | null {
  if (stat === 'count') return rows.length;
  const [column, fn] = [stat.slice(0, stat.lastIndexOf('.')), stat.slice(stat.lastIndexOf('.') + 1)];
  const xs = rows.map((r) => r[column]!).filter((v) => v !== '').map(Number);
  if (fn === 'count') return xs.length;
  if (xs.length === 0) return null;
  if (fn === 'sum') return exactSum(xs);
  if (fn === 'mean') return exactMean(xs);
  return fn === 'min' ? Math.min(...xs) : Math.max(...xs);
}

const compareKeys = (a: Value[], b: Value[]): number => {
  for (let i = 0; i < a.length; i++) {
    const [x, y] = [a[i]!, b[i]!];
    if (x === y) continue;
    if (x === null) return 1;
    if (y === null) return -1;
    return x < y ? -1 : 1;
  }
  return 0;
};

/** What the aggregate should answer, computed from the data endpoint's rows. */
async function expected(dataset: string, query: URLSearchParams): Promise<Value[][]> {
  const filters = new URLSearchParams([...query].filter(([k]) => !AGGREGATE_PARAMS.includes(k)));
  filters.set('format', 'csv');
  const { rows } = await csvObjects(`/api/v1/${dataset}?${filters}`);
  const keys = query.get('groupBy')?.split(',') ?? [];
  const stats = ['count', ...(query.get('stats')?.split(',').filter((s) => s !== 'count') ?? [])];
  const groups = new Map<string, { key: Value[]; rows: Record<string, string>[] }>();
  for (const row of rows) {
    const key = [bucketOf(row[TIME[dataset]!]!, query.get('interval') ?? 'day', query.get('from')!), ...keyValues(row, keys, Number(query.get('cell')))];
    const id = JSON.stringify(key);
    groups.set(id, { key, rows: [...(groups.get(id)?.rows ?? []), row] });
  }
  return [...groups.values()].sort((a, b) => compareKeys(a.key, b.key)).map((g) => [...g.key, ...stats.map((s) => statValue(s, g.rows))]);
}

const CASES: [string, string][] = [
  ['hotspots', 'from=2024-02-28T12:00:00Z&to=2025-01-01T00:00:01Z&groupBy=country&stats=frp.sum,frp.mean,frp.min,frp.max,frp.count,bright_ti4.mean'],
  ['hotspots', 'from=2024-02-01&to=2025-02-01&interval=week&groupBy=product,daynight&stats=frp.sum'],
  ['hotspots', 'from=2024-02-01&to=2025-02-01&interval=month&groupBy=grid,country&cell=0.25&stats=frp.sum,frp.max'],
  ['hotspots', 'from=2024-01-01&to=2026-01-01&interval=year&groupBy=grid&cell=0.1&country=PT&stats=frp.mean'],
  ['hotspots', 'from=2024-03-03T23:00:00Z&to=2024-03-04T01:00:00.000001Z&interval=hour&groupBy=confidence,satellite,instrument&bbox=-10,30,20,50&stats=frp.mean'],
  ['hotspots', 'from=2024-02-29&to=2024-03-01&interval=all&stats=frp.sum,scan.mean'],
  ['hotspots', 'from=2024-02-01&to=2025-02-01&interval=all&groupBy=grid&cell=10&stats=frp.count'],
  ['hotspots', 'from=2024-02-01&to=2025-02-01&interval=all&groupBy=grid&cell=0.01'],
  ['burnt-areas', 'from=2024-02-01&to=2024-04-01&interval=month&groupBy=COUNTRY,CLASS&stats=AREA_HA.sum,AREA_HA.mean,PERCNA2K.max'],
  ['burnt-areas', 'from=2024-02-10&to=2024-04-01&interval=week&groupBy=PROVINCE&bbox=23,38,24,39&stats=AREA_HA.sum'],
  ['fire-danger', 'from=2024-02-28&to=2024-03-05&groupBy=areaCode&stats=FWI.mean,FWI.sum,DSR.min'],
  ['fire-danger', 'from=2024-02-28&to=2024-03-05&model=effis-ecmwf&level=adminArea&interval=week&stats=FWI.max'],
  ['sensor-readings', 'from=2024-02-29T22:00:00Z&to=2024-03-01T02:00:00Z&interval=hour&groupBy=stationId&stats=airTemperatureC.mean,airTemperatureC.sum,precipitationMm.sum'],
  ['sensor-readings', 'from=2024-02-29T22:30:00Z&to=2024-03-02&simulated=false&stats=precipitationMm.sum,airTemperatureC.max'],
  ['sensor-readings', 'from=2024-02-29T22:00:00Z&to=2024-03-01T02:00:00Z&interval=hour&groupBy=stationId&series=corrected&stats=airTemperatureC.mean,airTemperatureC.sum,precipitationMm.sum,precipitationMm.max'],
];

describe('each group equals the data endpoint\'s rows for it', () => {
  it.each(CASES)('%s?%s', async (dataset, text) => {
    const query = new URLSearchParams(text);
    const { header, rows } = await csvObjects(`/api/v1/${dataset}/aggregate?${text}&format=csv`);
    const want = await expected(dataset, query);
    expect(want.length).toBeGreaterThan(0);
    const numeric = (h: string) => h === 'count' || h.includes('.') || h.startsWith('cell');
    const got = rows.map((r) => header.map((h) => (r[h] === '' ? null : numeric(h) ? Number(r[h]) : r[h]!)));
    expect(got).toEqual(want);
  });

  it('a group\'s count is what the data endpoint returns when asked for that bucket and key alone', async () => {
    const { rows } = await csvObjects('/api/v1/hotspots/aggregate?from=2024-02-28T12:00:00Z&to=2024-03-05&groupBy=country&format=csv');
    const keyed = rows.filter((r) => r.country !== '');
    expect(keyed.length).toBeGreaterThan(4);
    for (const g of keyed) {
      const from = g.bucket! < '2024-02-28T12:00:00Z' ? '2024-02-28T12:00:00Z' : g.bucket!;
      const to = iso(Date.parse(g.bucket!) + 86_400_000);
      const data = await csvObjects(`/api/v1/hotspots?from=${from}&to=${to}&country=${g.country}&format=csv`);
      expect(data.rows.length, `${g.bucket} ${g.country}`).toBe(Number(g.count));
    }
  });
});

describe('corrected readings', () => {
  it('series=corrected aggregates the corrected values and names the model, as the data endpoint does', async () => {
    const url = '/api/v1/sensor-readings/aggregate?from=2024-02-29T22:00:00Z&to=2024-03-01T02:00:00Z&interval=all&series=corrected&stats=airTemperatureC.sum&format=csv';
    const [corrected, raw] = [await server.get(url), await server.get(url.replace('corrected', 'raw'))];
    expect(JSON.parse(corrected.headers.get('x-query')!)).toMatchObject({ series: 'corrected', correctionModel: 'aggregate-test-1' });
    expect(JSON.parse(raw.headers.get('x-query')!).correctionModel).toBeUndefined();
    expect(await corrected.text()).not.toBe(await raw.text());
  });
});

describe('exact sums', () => {
  it('frp.sum is the exact sum where DuckDB\'s own sum of the same rows is not', async () => {
    const { rows } = await csvObjects('/api/v1/hotspots/aggregate?from=2024-02-28&to=2024-02-29&interval=all&stats=frp.sum&format=csv');
    const c = await (await DuckDBInstance.create(':memory:')).connect();
    const plain = (await c.runAndReadAll(`SELECT sum(frp) FROM read_parquet('${path.join(dataDir, 'hotspots/date=2024-02-28/a.parquet')}')`)).getRows()[0]![0];
    c.closeSync();
    const data = await csvObjects('/api/v1/hotspots?from=2024-02-28&to=2024-02-29&format=csv');
    const exact = exactSum(data.rows.map((r) => r.frp!).filter((v) => v !== '').map(Number));
    expect(Number(rows[0]!['frp.sum'])).toBe(exact);
    expect(plain).not.toBe(exact);
  });
});

describe('geometry', () => {
  it('a grid cell is its polygon, counter-clockwise from the south-west corner in the properties; a station its point; a position off the grid null', async () => {
    const grid = (await (await server.get('/api/v1/hotspots/aggregate?from=2024-02-28&to=2024-02-29&groupBy=grid&cell=0.25&interval=all')).json()) as any;
    const cell = grid.features.find((f: any) => f.properties.cellLon === -8.25 && f.properties.cellLat === 39.5);
    expect(cell.geometry).toEqual({ type: 'Polygon', coordinates: [[[-8.25, 39.5], [-8, 39.5], [-8, 39.75], [-8.25, 39.75], [-8.25, 39.5]]] });
    expect(grid.features.find((f: any) => f.properties.cellLon === 179.75 && f.properties.cellLat === 89.75)).toBeDefined();
    expect(grid.features.at(-1)).toMatchObject({ geometry: null, properties: { cellLon: null, cellLat: null } });
    const stations = (await (await server.get('/api/v1/sensor-readings/aggregate?from=2024-02-29&to=2024-03-02&groupBy=stationId&interval=all')).json()) as any;
    expect(stations.features.map((f: any) => [f.properties.stationId, f.geometry?.coordinates ?? null])).toEqual([['ST0001', [-7.9, 40.1]], ['ST0002', [-9.1, 38.5]], ['ST0099', null]]);
  });
});
