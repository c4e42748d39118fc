import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { writeAggregateData } from '../../helpers/aggregate-data.ts';
import { hotspot } from '../../helpers/fixtures.ts';
import { writeParquet } from '../../helpers/parquet.ts';
import { hyparquetKeyValues, hyparquetRows } from '../../helpers/columnar.ts';
import { parseCsv } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

type Json = Record<string, any>;
let dataDir: string;
let server: TestServer;
const extra: TestServer[] = [];
beforeAll(async () => {
  dataDir = await writeAggregateData();
  server = await startServer(dataDir);
}, 60_000);
afterAll(() => server.close());
afterEach(async () => {
  for (const s of extra.splice(0)) await s.close();
});
const serve = async (env: Record<string, string>, dir = dataDir) => {
  const s = await startServer(dir, env);
  extra.push(s);
  return s;
};

const H = '/api/v1/hotspots/aggregate';
const YEAR = 'from=2024-01-01&to=2025-02-01';

describe('bad input is a 400 naming the parameter and what it allows', () => {
  const cases: [string, string, RegExp][] = [
    [`${H}?interval=decade`, 'interval', /one of: hour, day, week, month, year, all/],
    [`${H}?interval=day&interval=week`, 'interval', /must not be repeated/],
    [`${H}?groupBy=nope`, 'groupBy', /unknown key 'nope'; allowed: country, product, instrument, satellite, daynight, confidence, grid/],
    [`${H}?groupBy=country,country`, 'groupBy', /'country' is repeated; allowed: country/],
    [`${H}?groupBy=country,product,instrument,daynight`, 'groupBy', /at most 3 values; allowed: country/],
    [`${H}?groupBy=grid`, 'cell', /required with groupBy=grid; one of: 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10/],
    [`${H}?cell=0.25`, 'cell', /only with groupBy=grid/],
    [`${H}?groupBy=grid&cell=0.3`, 'cell', /one of: 0.01, 0.05/],
    [`${H}?stats=frp.avg`, 'stats', /unknown stat 'frp.avg'; allowed: count, or <measure>.<count\|sum\|min\|max\|mean> with measure one of: frp, brightness/],
    [`${H}?stats=country.sum`, 'stats', /'country' is not a numeric measure; allowed: count/],
    [`${H}?stats=frp.sum,frp.sum`, 'stats', /'frp.sum' is repeated/],
    [`${H}?stats=`, 'stats', /unknown stat; allowed/],
    [`${H}?country=Portugal`, 'country', /two-letter/],
    [`${H}?bbox=1,2,3`, 'bbox', /.+/],
    [`${H}?x=1`, 'x', /unknown parameter; allowed: .*interval, groupBy, cell, stats/],
    ['/api/v1/burnt-areas/aggregate?groupBy=grid', 'groupBy', /allowed: COUNTRY, PROVINCE, CLASS/],
    ['/api/v1/burnt-areas/aggregate?cell=1', 'cell', /unknown parameter/],
    ['/api/v1/fire-danger/aggregate?model=nope', 'model', /valid values: cffdrs-era5, effis-ecmwf/],
    ['/api/v1/sensor-readings/aggregate?stationId=a%20b', 'stationId', /station id/],
  ];
  it.each(cases)('%s → %s', async (url, parameter, message) => {
    const r = await server.get(url);
    expect(r.status).toBe(400);
    const body = (await r.json()) as Json;
    const error = body.errors.find((e: Json) => e.parameter === parameter);
    expect(error?.message).toMatch(message);
  });

  it('sensor-stations has no aggregate', async () => {
    expect((await server.get('/api/v1/sensor-stations/aggregate')).status).toBe(404);
  });
});

describe('meta, headers and the window', () => {
  it('echoes the window, every parameter in effect with its default, and counts groups', async () => {
    const r = await server.get(`${H}?from=2024-02-28&to=2024-03-01&groupBy=country&stats=frp.sum`);
    const body = (await r.json()) as Json;
    expect(body.meta).toMatchObject({
      dataset: 'hotspots',
      window: { from: '2024-02-28T00:00:00Z', to: '2024-03-01T00:00:00Z' },
      query: { country: null, bbox: null, interval: 'day', groupBy: 'country', cell: null, stats: 'count,frp.sum' },
      truncated: false,
      rowLimit: 100_000,
      returned: body.features.length,
      next: null,
    });
    expect(r.headers.get('x-returned')).toBe(String(body.features.length));
    const csv = await server.get(`${H}?from=2024-02-28&to=2024-03-01&format=csv&stats=frp.max,count`);
    expect((await csv.text()).split('\n')[0]).toBe('bucket,frp.max,count');
    expect(JSON.parse(csv.headers.get('x-query')!)).toMatchObject({ stats: 'frp.max,count', groupBy: null });
  });

  it('a window with no rows is a 200 with no groups; the default window ends now', async () => {
    const r = await server.get(`${H}?from=2023-01-01&to=2023-02-01&groupBy=country`);
    expect(r.status).toBe(200);
    expect(((await r.json()) as Json).features).toEqual([]);
    const now = (await (await server.get(H)).json()) as Json;
    expect(Date.parse(now.meta.window.to) - Date.parse(now.meta.window.from)).toBe(86_400_000);
  });

  it('HEAD says what GET would, without a body', async () => {
    const url = `${H}?${YEAR}&groupBy=country&format=csv`;
    const identity = { 'accept-encoding': 'identity' };
    const [head, get] = [await server.get(url, { method: 'HEAD', headers: identity }), await server.get(url, { headers: identity })];
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String((await get.arrayBuffer()).byteLength));
    expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
  });
});

/** A timestamp read back (a Date, or epoch µs) as the wire spells it. */
const iso = (v: unknown) => (v instanceof Date ? v : new Date(Number(v as bigint) / 1000)).toISOString().replace('.000Z', 'Z');

describe('Arrow and Parquet by Accept', () => {
  it('Arrow and Parquet hold the CSV\'s groups as typed columns and the meta block in their metadata', async () => {
    const url = `${H}?from=2024-02-28T12:00:00Z&to=2025-01-01T00:00:01Z&groupBy=country,grid&cell=0.25&stats=frp.sum,frp.max`;
    const csv = parseCsv(await (await server.get(`${url}&format=csv`)).text());
    const r = await server.get(url, { headers: { accept: 'application/vnd.apache.arrow.stream' } });
    expect(r.headers.get('content-type')).toBe('application/vnd.apache.arrow.stream');
    const table = tableFromIPC(new Uint8Array(await r.arrayBuffer()));
    expect(table.schema.fields.map((f) => [f.name, String(f.type)])).toEqual([
      ['bucket', 'Timestamp<MICROSECOND, UTC>'], ['country', 'Utf8'], ['cellLon', 'Float64'], ['cellLat', 'Float64'], ['count', 'Int64'], ['frp.sum', 'Float64'], ['frp.max', 'Float64'], ['geometry', 'Binary'],
    ]);
    // The bucket's stored microseconds (the row view turns timestamps into milliseconds).
    const micros = table.getChild('bucket')!.data.flatMap((d) => [...(d.values as BigInt64Array)]);
    const bucket = (i: number) => new Date(Number(micros[i]! / 1000n)).toISOString().replace('.000Z', 'Z');
    const cell = (name: string, v: unknown) => (v === null ? null : name === 'country' ? v : Number(v));
    // The cells' geometry (a last column) is compared with GeoJSON's in aggregate-geometry.test.ts.
    const values = table.schema.fields.filter((f) => f.name !== 'geometry');
    const rows = table.toArray().map((row, i) => values.map((f) => (f.name === 'bucket' ? bucket(i) : cell(f.name, (row as Json)[f.name]))));
    const fromCsv = csv.slice(1).map((line) => line.map((text, j) => (j === 0 ? text : text === '' ? null : cell(csv[0]![j]!, text))));
    expect(table.schema.fields.map((f) => f.name)).toEqual([...csv[0]!, 'geometry']);
    expect(rows).toEqual(fromCsv);
    expect(micros[0]! % 1_000_000n).toBe(0n);
    const meta = JSON.parse(table.schema.metadata.get('fire_api:meta')!) as Json;
    expect(meta).toMatchObject({ dataset: 'hotspots', returned: rows.length, query: { groupBy: 'country,grid', cell: '0.25' } });
    expect(meta.observation.ageSeconds).toBeUndefined();
    const parquet = await server.get(url, { headers: { accept: 'application/vnd.apache.parquet' } });
    expect(parquet.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    const bytes = Buffer.from(await parquet.arrayBuffer());
    const stored = await hyparquetRows(bytes);
    expect(stored.map((row) => Object.entries(row).filter(([k]) => k !== 'geometry').map(([k, v]) => (k === 'bucket' ? iso(v) : cell(k, v ?? null))))).toEqual(fromCsv);
    expect(JSON.parse(hyparquetKeyValues(bytes)['fire_api:meta']!)).toEqual(meta);
    const empty = `${H}?from=2023-01-01&to=2023-02-01&groupBy=country`;
    const none = await server.get(empty, { headers: { accept: 'application/vnd.apache.parquet' } });
    expect([none.status, await hyparquetRows(Buffer.from(await none.arrayBuffer()))]).toEqual([200, []]);
    const noBatches = await server.get(empty, { headers: { accept: 'application/vnd.apache.arrow.stream' } });
    expect(tableFromIPC(new Uint8Array(await noBatches.arrayBuffer())).numRows).toBe(0);
  });
});

describe('AGGREGATE_ROW_LIMIT cuts on a bucket boundary', () => {
  it('walking from next.from returns every group once', async () => {
    const full = parseCsv(await (await server.get(`${H}?${YEAR}&groupBy=country&format=csv`)).text()).slice(1);
    const small = await serve({ AGGREGATE_ROW_LIMIT: '5' });
    const walked: string[][] = [];
    let from: string | null = '2024-01-01';
    let pages = 0;
    while (from !== null) {
      const r = await small.get(`${H}?from=${from}&to=2025-02-01&groupBy=country`);
      const body = (await r.json()) as Json;
      expect(body.features.length).toBeLessThanOrEqual(5);
      expect(body.meta.truncated).toBe(body.meta.next !== null);
      walked.push(...body.features.map((f: Json) => [f.properties.bucket, f.properties.country ?? '', String(f.properties.count)]));
      from = body.meta.next?.from ?? null;
      pages++;
    }
    expect(pages).toBeGreaterThan(2);
    expect(walked).toEqual(full);
  });

  it('a first bucket with more groups than the limit is cut inside it, with nothing to continue', async () => {
    const small = await serve({ AGGREGATE_ROW_LIMIT: '2' });
    const body = (await (await small.get(`${H}?${YEAR}&interval=all&groupBy=country`)).json()) as Json;
    expect(body.meta).toMatchObject({ truncated: true, next: null, returned: 2, rowLimit: 2 });
    expect(body.features.map((f: Json) => f.properties.country)).toEqual(['ES', 'PT']);
  });
});

describe('caching and availability, as for extracts', () => {
  it('an answer asked for again comes from the aggregate cache, the same bytes; new data is a new key', async () => {
    const dir = await writeAggregateData();
    const s = await serve({}, dir);
    const url = `${H}?from=2024-02-28&to=2024-03-05&groupBy=country,grid&cell=0.25&stats=frp.sum,frp.mean`;
    const body = async () => (await (await s.get(url)).text()).replace(/"ageSeconds":\d+/, '"ageSeconds":0');
    const cache = s.context.extract.aggregateCache!;
    // Kept when first computed: the second comes from the cache.
    const first = await body();
    const hits = cache.hits;
    expect(await body()).toBe(first);
    expect(cache.hits).toBe(hits + 1);
    expect(await (await s.get(`${url}&format=csv`)).text()).toContain('bucket,country,cellLon,cellLat,count,frp.sum,frp.mean');
    await writeParquet(path.join(dir, 'hotspots/date=2024-03-01/z-late.parquet'), hotspots, [hotspot('late-2', '2024-03-01T05:00:00Z', { country: 'ZZ' })]);
    const hitsBefore = cache.hits;
    const after = await body();
    expect(after).not.toBe(first);
    expect(after).toContain('"country":"ZZ"');
    expect(cache.hits).toBe(hitsBefore);
  });

  it('ETag from the data version and the query: 304 when unchanged, another tag for another query or a new file', async () => {
    const url = `${H}?from=2024-03-01&to=2024-03-02&groupBy=country`;
    const first = await server.get(url);
    const etag = first.headers.get('etag')!;
    expect((await server.get(url, { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await server.get(`${url}&stats=frp.sum`)).headers.get('etag')).not.toBe(etag);
    expect((await server.get('/api/v1/hotspots?from=2024-03-01&to=2024-03-02')).headers.get('etag')).not.toBe(etag);
    await writeParquet(path.join(dataDir, 'hotspots/date=2024-03-01/z-late.parquet'), hotspots, [hotspot('late-1', '2024-03-01T05:00:00Z')]);
    const after = await server.get(url, { headers: { 'if-none-match': etag } });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(etag);
  });

  it('an unreadable file in the window is a 503 before any byte; a window without it still answers', async () => {
    const dir = await writeAggregateData();
    await writeFile(path.join(dir, 'hotspots/date=2024-03-04/broken.parquet'), 'not parquet at all');
    const s = await serve({}, dir);
    const r = await s.get(`${H}?from=2024-03-04&to=2024-03-05&groupBy=country`);
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).not.toBeNull();
    expect((await s.get(`${H}?from=2024-02-28&to=2024-03-01&groupBy=country`)).status).toBe(200);
  });
});
