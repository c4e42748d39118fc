import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burntAreas } from '../../datasets/burnt-areas.ts';
import { fireDanger } from '../../datasets/fire-danger.ts';
import { hotspots } from '../../datasets/hotspots.ts';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { sensorReadings } from '../../datasets/sensor-readings.ts';
import { sensorStations } from '../../datasets/sensor-stations.ts';
import { ARROW, arrowTable, csvRows, fetchBytes, hyparquetRows, objectRows, PARQUET } from '../helpers/columnar.ts';
import { parseCsv } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { spots, writeFilterData, type Spot } from './filters-data.ts';

let server: TestServer;
let small: TestServer;
const W = 'from=2025-08-01&to=2025-08-02';

beforeAll(async () => {
  const dir = await writeFilterData();
  server = await startServer(dir);
  small = await startServer(dir, { ROW_LIMIT: '4' });
});
afterAll(async () => {
  await server.close();
  await small.close();
});

/** The ids of a GeoJSON and a CSV response to the same query; both must agree. */
async function ids(dataset: string, query: string, idColumn = 'id'): Promise<string[]> {
  const geo = await server.get(`/api/v1/${dataset}?${query}`);
  expect(geo.status).toBe(200);
  const body = (await geo.json()) as { features: { properties: Record<string, unknown> }[] };
  const fromGeo = body.features.map((f) => String(f.properties[idColumn]));
  const csv = await server.get(`/api/v1/${dataset}?${query}&format=csv`);
  const [header, ...rows] = parseCsv(await csv.text());
  const fromCsv = rows.map((r) => r[header!.indexOf(idColumn)]!);
  expect(fromCsv).toEqual(fromGeo);
  expect(Number(csv.headers.get('x-returned'))).toBe(fromCsv.length);
  return fromGeo;
}

/** The reference: pixel centres inside the box, edges included, two ranges across the antimeridian. */
function inBox(s: Spot, [minLon, minLat, maxLon, maxLat]: number[]): boolean {
  const lat = s.lat >= minLat! && s.lat <= maxLat!;
  const lon = minLon! <= maxLon! ? s.lon >= minLon! && s.lon <= maxLon! : s.lon >= minLon! || s.lon <= maxLon!;
  return lat && lon;
}
const expected = (box: number[]) => spots().filter((s) => inBox(s, box)).map((s) => s.id);

describe('bbox on hotspots: pixel centre inside the box, edges included', () => {
  it('keeps exactly the points inside or on an edge of the box, the same in CSV and GeoJSON', async () => {
    const box = [-9.5, 38.5, -8.5, 39.5];
    const got = await ids('hotspots', `${W}&bbox=${box.join(',')}`);
    expect(got).toEqual(expected(box));
    expect(got).toHaveLength(9); // 3 longitudes x 3 latitudes, edges and corners included
  });

  it('a box crossing the antimeridian keeps both sides (180 and -180 included)', async () => {
    const box = [179, 38, -179.5, 40];
    const got = await ids('hotspots', `${W}&bbox=${box.join(',')}`);
    expect(got).toEqual(expected(box));
    expect(got).toHaveLength(20); // 179.5, 180, -180 and -179.5 at five latitudes
  });

  it('combines with country and echoes the normalised box in meta.query and X-Query', async () => {
    const r = await server.get(`/api/v1/hotspots?${W}&bbox=-9.50,38.5,-8.5,39.5e0&country=pt`);
    const body = (await r.json()) as { meta: { query: unknown; returned: number } };
    expect(body.meta.query).toEqual({ country: 'PT', bbox: '-9.5,38.5,-8.5,39.5' });
    expect(body.meta.returned).toBe(9);
    const csv = await server.get(`/api/v1/hotspots?${W}&bbox=-9.5,38.5,-8.5,39.5&country=ES&format=csv`);
    expect(JSON.parse(csv.headers.get('x-query')!)).toEqual({ country: 'ES', bbox: '-9.5,38.5,-8.5,39.5' });
    expect(parseCsv(await csv.text())).toHaveLength(1);
  });

  it('truncation counts the filtered rows and next.from walks the filtered rows exactly once', async () => {
    const box = [-9.5, 38.5, -8.5, 39.5];
    const seen: string[] = [];
    let pages = 0;
    for (let from: string | null = '2025-08-01'; from; pages++) {
      const r: Response = await small.get(`/api/v1/hotspots?from=${encodeURIComponent(from)}&to=2025-08-02&bbox=${box.join(',')}&format=csv`);
      const rows = parseCsv(await r.text()).slice(1);
      if (r.headers.get('x-truncated') === 'true') expect(rows.length).toBeGreaterThan(0);
      seen.push(...rows.map((row) => row[0]!));
      from = r.headers.get('x-next-from');
    }
    expect(seen).toEqual(expected(box));
    expect(pages).toBeGreaterThan(2);
  });
});

describe('bbox on burnt-areas: exact intersection with the perimeter', () => {
  it('leaves out a perimeter whose envelope meets the box but whose polygon does not; a touching corner counts', async () => {
    expect(await ids('burnt-areas', `${W}&bbox=6,6,9,9`)).toEqual(['3']);
  });

  it('a box inside a hole of a perimeter gets an empty 200; one over the ring gets it', async () => {
    expect(await ids('burnt-areas', `${W}&bbox=23,23,27,27`)).toEqual([]);
    expect(await ids('burnt-areas', `${W}&bbox=21,21,23,23`)).toEqual(['2', '5']);
  });

  it('a box crossing the antimeridian finds a MultiPolygon on both sides', async () => {
    expect(await ids('burnt-areas', `${W}&bbox=170,-5,-170,5`)).toEqual(['4']);
    expect(await ids('burnt-areas', `${W}&bbox=-180,-90,180,90`)).toEqual(['1', '2', '3', '4', '5', '6']);
  });

  it('country filters on the EFFIS code, alone and with a box', async () => {
    expect(await ids('burnt-areas', `${W}&country=el`)).toEqual(['2', '5']);
    expect(await ids('burnt-areas', `${W}&country=PT&bbox=21,21,23,23`)).toEqual([]);
  });

  it('truncated walks count only perimeters that meet the box', async () => {
    const seen: string[] = [];
    for (let from: string | null = '2025-08-01'; from; ) {
      const r: Response = await small.get(`/api/v1/burnt-areas?from=${encodeURIComponent(from)}&to=2025-08-02&bbox=0,0,30,30`);
      const body = (await r.json()) as { features: { id: number }[]; meta: { next: { from: string } | null; truncated: boolean } };
      seen.push(...body.features.map((f) => String(f.id)));
      from = body.meta.next?.from ?? null;
    }
    expect(seen).toEqual(['1', '2', '3', '5', '6']);
  });
});

describe('areaCode, simulated and stationId', () => {
  it('fire-danger: areaCode picks one area at its level', async () => {
    expect(await ids('fire-danger', `${W}&areaCode=es`, 'areaCode')).toEqual(['ES']);
    expect(await ids('fire-danger', `${W}&level=adminArea&areaCode=PT15`, 'areaCode')).toEqual(['PT15']);
    expect(await ids('fire-danger', `${W}&areaCode=PT15`, 'areaCode')).toEqual([]);
  });

  it('sensor-stations: simulated=false leaves simulated stations out, simulated=true keeps only them', async () => {
    expect(await ids('sensor-stations', 'simulated=false', 'stationId')).toEqual(['S1', 'S3']);
    expect(await ids('sensor-stations', 'simulated=true', 'stationId')).toEqual(['S2']);
    expect(await ids('sensor-stations', '', 'stationId')).toEqual(['S1', 'S2', 'S3']);
  });

  it('sensor-readings: simulated and stationId filter the rows; the id list is echoed sorted, without duplicates', async () => {
    const real = await ids('sensor-readings', `${W}&simulated=false`, 'stationId');
    expect(real).toEqual(Array.from({ length: 6 }, () => ['S1', 'S3']).flat());
    expect(await ids('sensor-readings', `${W}&stationId=S3,S2,S3`, 'stationId')).toEqual(Array.from({ length: 6 }, () => ['S2', 'S3']).flat());
    const r = await server.get(`/api/v1/sensor-readings?${W}&stationId=S3,S2,S3&simulated=false`);
    const body = (await r.json()) as { meta: { query: unknown }; features: unknown[] };
    expect(body.meta.query).toEqual({ simulated: 'false', stationId: 'S2,S3', series: 'raw' });
    expect(body.features).toHaveLength(6);
  });
});

describe('filters are validated, documented per dataset and part of the ETag', () => {
  const problem = async (path: string) => {
    const r = await server.get(path);
    expect(r.status).toBe(400);
    return ((await r.json()) as { errors: { parameter: string; message: string }[] }).errors;
  };

  it.each([
    ['1,2,3', /four numbers/],
    ['a,b,c,d', /four numbers/],
    ['0,-91,1,0', /latitudes/],
    ['-181,0,1,1', /longitudes/],
    ['0,10,1,5', /minLat/],
  ])('bbox=%s is a 400 that says why', async (bbox, why) => {
    const errors = await problem(`/api/v1/hotspots?${W}&bbox=${bbox}`);
    expect(errors).toEqual([{ parameter: 'bbox', message: expect.stringMatching(why) }]);
  });

  it('simulated and stationId reject bad values; more than 100 ids is a 400', async () => {
    expect(await problem('/api/v1/sensor-stations?simulated=yes')).toEqual([{ parameter: 'simulated', message: 'must be true or false' }]);
    expect((await problem('/api/v1/sensor-stations?stationId=S1,a%20b'))[0]?.parameter).toBe('stationId');
    const many = Array.from({ length: 101 }, (_, i) => `S${i}`).join(',');
    expect(await problem(`/api/v1/sensor-readings?${W}&stationId=${many}`)).toEqual([{ parameter: 'stationId', message: 'at most 100 values' }]);
  });

  it('bbox is unknown where the dataset has no geometry, and listed as allowed only where it has', async () => {
    const [danger] = await problem(`/api/v1/fire-danger?${W}&bbox=0,0,1,1`);
    expect(danger?.message).toMatch(/^unknown parameter; allowed: /);
    expect(danger?.message).not.toMatch(/bbox|simulated/);
    const [hot] = await problem(`/api/v1/hotspots?${W}&simulated=true`);
    expect(hot?.message).toMatch(/allowed: .*bbox/);
    expect(hot?.message).not.toMatch(/simulated|stationId/);
  });

  it('a filter changes the ETag; the same box written differently does not', async () => {
    const tag = async (q: string) => (await server.get(`/api/v1/hotspots?${W}${q}`, { method: 'HEAD' })).headers.get('etag');
    const none = await tag('');
    const box = await tag('&bbox=-9.5,38.5,-8.5,39.5');
    expect(box).not.toBe(none);
    expect(await tag('&bbox=-9.50,38.50,-8.5,39.5')).toBe(box);
    const r = await server.get(`/api/v1/hotspots?${W}&bbox=-9.5,38.5,-8.5,39.5`, { headers: { 'if-none-match': box! } });
    expect(r.status).toBe(304);
  });
});

describe('Parquet and Arrow responses apply the same filters as CSV', () => {
  const cases: [DatasetDescriptor, string][] = [
    [hotspots, `${W}&bbox=-9.5,38.5,-8.5,39.5`],
    [hotspots, `${W}&bbox=179,38,-179,40`],
    [burntAreas, `${W}&bbox=6,6,9,9`],
    [burntAreas, `${W}&country=PT&bbox=-180,-90,180,90`],
    [fireDanger, `${W}&level=adminArea&areaCode=PT15`],
    [sensorStations, 'simulated=false'],
    [sensorReadings, `${W}&stationId=S3,S2&simulated=false`],
  ];
  it.each(cases.map(([d, q]) => [`${d.name}?${q}`, d, q] as const))('%s', async (_label, d, query) => {
    const all = csvRows(d, await (await server.get(`/api/v1/${d.name}?${query.replace(/&?(bbox|country|areaCode|stationId|simulated)=[^&]*/g, '')}&format=csv`)).text());
    const csv = csvRows(d, await (await server.get(`/api/v1/${d.name}?${query}&format=csv`)).text());
    // The filter does something here: some rows kept, some left out.
    expect(csv.length).toBeGreaterThan(0);
    expect(csv.length).toBeLessThan(all.length);
    const parquet = await fetchBytes(server.get, `/api/v1/${d.name}?${query}`, PARQUET);
    expect(parquet.headers.get('x-returned')).toBe(String(csv.length));
    expect(objectRows(d, await hyparquetRows(parquet.bytes))).toEqual(csv);
    const arrow = await fetchBytes(server.get, `/api/v1/${d.name}?${query}`, ARROW);
    expect(objectRows(d, arrowTable(d, arrow.bytes).rows)).toEqual(csv);
  });
});
