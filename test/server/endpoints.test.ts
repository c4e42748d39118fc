import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv, writeSampleData } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
const get = (path: string) => server.get(`${path}`);
const json = async (path: string) => {
  const r = await get(path);
  return { status: r.status, headers: r.headers, body: (await r.json()) as any };
};

beforeAll(async () => {
  server = await startServer(await writeSampleData());
});
afterAll(() => server.close());

describe('hotspots', () => {
  it('returns a FeatureCollection whose meta comes before features, with full raw columns', async () => {
    const r = await get('/api/v1/hotspots?from=2025-08-01&to=2025-08-02');
    expect(r.headers.get('content-type')).toBe('application/geo+json');
    const text = await r.text();
    expect(text.indexOf('"meta"')).toBeLessThan(text.indexOf('"features"'));
    const body = JSON.parse(text);
    expect(body.type).toBe('FeatureCollection');
    expect(body.features.map((f: any) => f.id)).toEqual(['h1', 'h2', 'h3']);
    const f = body.features[0];
    expect(f.geometry).toEqual({ type: 'Point', coordinates: [-8.25, 39.5] });
    expect(Object.keys(f.properties)).toEqual(['id', 'product', 'acquiredAtUtc', 'country', 'latitude', 'longitude', 'brightness', 'bright_t31', 'bright_ti4', 'bright_ti5', 'scan', 'track', 'acq_date', 'acq_time', 'satellite', 'instrument', 'confidence', 'version', 'frp', 'daynight', 'type']);
    expect(body.features[2].properties.acquiredAtUtc).toBe('2025-08-01T23:59:59.999999Z');
    expect(body.features[2].properties.country).toBeNull();
    expect(body.meta).toMatchObject({
      dataset: 'hotspots',
      window: { from: '2025-08-01T00:00:00Z', to: '2025-08-02T00:00:00Z' },
      query: { country: null, bbox: null },
      truncated: false,
      returned: 3,
      next: null,
      observation: { chainRan: true, lastSuccessUtc: '2025-08-03T06:00:00Z' },
    });
    expect(body.meta.dataVersion).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('filters by country case-insensitively and echoes the normalised value', async () => {
    const { body } = await json('/api/v1/hotspots?from=2025-08-01&to=2025-08-03&country=es');
    expect(body.features.map((f: any) => f.id)).toEqual(['h2']);
    expect(body.meta.query).toEqual({ country: 'ES', bbox: null });
  });

  it('serves CSV with one header row, RFC 4180 quoting, empty nulls and meta in X- headers', async () => {
    const r = await get('/api/v1/hotspots?from=2025-08-01&to=2025-08-03&format=csv');
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(r.headers.get('x-returned')).toBe('4');
    expect(r.headers.get('x-truncated')).toBe('false');
    expect(r.headers.get('x-window-from')).toBe('2025-08-01T00:00:00Z');
    expect(r.headers.get('x-data-version')).toMatch(/^sha256:/);
    expect(JSON.parse(r.headers.get('x-query')!)).toEqual({ country: null, bbox: null });
    const text = await r.text();
    expect(text.endsWith('\n')).toBe(true);
    expect(text).toContain('"with,comma ""quoted"""');
    const rows = parseCsv(text);
    expect(rows).toHaveLength(5);
    expect(rows[0]![0]).toBe('id');
    expect(rows.every((row) => row.length === 21)).toBe(true);
    const modis = rows[4]!;
    expect(modis[13]).toBe('0000');
    expect(modis[16]).toBe('77');
    expect(modis[20]).toBe('');
  });
});

describe('burnt-areas', () => {
  it('decodes the GeoParquet perimeter into a GeoJSON Polygon with its hole', async () => {
    const { body } = await json('/api/v1/burnt-areas?from=2025-08-01&to=2025-09-01');
    expect(body.features).toHaveLength(1);
    const f = body.features[0];
    expect(f.id).toBe(101);
    expect(f.geometry.type).toBe('Polygon');
    expect(f.geometry.coordinates).toHaveLength(2);
    expect(f.geometry.coordinates[0][1]).toEqual([24, 38.1]);
    expect(f.properties.FINALDATE).toBeNull();
    expect(f.properties).not.toHaveProperty('geometry');
  });

  it('CSV is the attribute table without geometry', async () => {
    const rows = parseCsv(await (await get('/api/v1/burnt-areas?from=2025-08-01&to=2025-09-01&format=csv')).text());
    expect(rows[0]).not.toContain('geometry');
    expect(rows[0]).toHaveLength(19);
    expect(rows[1]![1]).toBe('2025-08-01T00:00:00Z');
  });
});

describe('fire-danger', () => {
  it('defaults to the first model and the country level, and echoes both', async () => {
    const { body } = await json('/api/v1/fire-danger?from=2025-08-01&to=2025-08-03');
    expect(body.meta.query).toEqual({ model: 'cffdrs-era5', level: 'country', areaCode: null });
    expect(body.features.map((f: any) => [f.properties.date, f.properties.areaCode, f.properties.FWI])).toEqual([
      ['2025-08-01T00:00:00Z', 'PT', 20.5],
      ['2025-08-02T00:00:00Z', 'PT', 12.5],
    ]);
    expect(body.features[0].geometry).toBeNull();
  });

  it('CSV records the model chosen by default in X-Query', async () => {
    const r = await get('/api/v1/fire-danger?from=2025-08-01&to=2025-08-03&format=csv');
    expect(JSON.parse(r.headers.get('x-query')!)).toEqual({ level: 'country', areaCode: null, model: 'cffdrs-era5' });
    await r.arrayBuffer();
  });

  it('serves exactly one model and one level per response', async () => {
    const { body } = await json('/api/v1/fire-danger?from=2025-08-01&to=2025-08-03&model=effis-ecmwf&level=adminArea');
    expect(body.features.map((f: any) => [f.properties.model, f.properties.level, f.properties.areaCode])).toEqual([['effis-ecmwf', 'adminArea', 'PT11']]);
  });

  it('rejects an unknown model with a 400 that lists the valid ones', async () => {
    const r = await json('/api/v1/fire-danger?model=nope');
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(r.body.errors).toEqual([{ parameter: 'model', message: expect.stringContaining('cffdrs-era5, effis-ecmwf') }]);
  });

  it('rejects a level that does not exist', async () => {
    const r = await json('/api/v1/fire-danger?level=region');
    expect(r.status).toBe(400);
    expect(r.body.errors[0].parameter).toBe('level');
  });
});

describe('sensor-stations and sensor-readings', () => {
  it('lists stations with simulated ones, no window', async () => {
    const { body } = await json('/api/v1/sensor-stations');
    expect(body.meta.window).toBeNull();
    expect(body.features.map((f: any) => [f.id, f.properties.simulated])).toEqual([['ST0001', false], ['ST0002', true]]);
    expect(body.features[1].geometry).toEqual({ type: 'Point', coordinates: [-9.1, 38.5] });
  });

  it('rejects a window on the station registry', async () => {
    const r = await json('/api/v1/sensor-stations?from=2025-08-01');
    expect(r.status).toBe(400);
    expect(r.body.errors[0].parameter).toBe('from');
  });

  it('readings carry their station point, simulated, series and a null correctionModel', async () => {
    const { body } = await json('/api/v1/sensor-readings?from=2025-08-01&to=2025-08-02');
    expect(body.meta.query).toEqual({ simulated: null, stationId: null, series: 'raw' });
    expect(body.features.map((f: any) => [f.properties.stationId, f.properties.measuredAtUtc])).toEqual([
      ['ST0001', '2025-08-01T12:00:00Z'],
      ['ST0002', '2025-08-01T12:00:00Z'],
      ['ST0001', '2025-08-01T12:10:00Z'],
    ]);
    expect(body.features[1].geometry).toEqual({ type: 'Point', coordinates: [-9.1, 38.5] });
    expect(Object.keys(body.features[0].properties).slice(0, 5)).toEqual(['stationId', 'measuredAtUtc', 'simulated', 'series', 'correctionModel']);
    expect(body.features[1].properties).toMatchObject({ simulated: true, series: 'raw', correctionModel: null, fuelMoisturePct: null });
  });

  it('series=corrected has the identical shape and values as raw, with correctionModel null', async () => {
    const raw = parseCsv(await (await get('/api/v1/sensor-readings?from=2025-08-01&to=2025-08-02&format=csv')).text());
    const cor = parseCsv(await (await get('/api/v1/sensor-readings?from=2025-08-01&to=2025-08-02&format=csv&series=corrected')).text());
    expect(cor[0]).toEqual(raw[0]);
    expect(raw[0]![1]).toBe('measuredAtUtc');
    expect(cor.map((r) => r.filter((_, i) => i !== 3))).toEqual(raw.map((r) => r.filter((_, i) => i !== 3)));
    expect(cor.slice(1).map((r) => [r[3], r[4]])).toEqual([['corrected', ''], ['corrected', ''], ['corrected', '']]);
  });

  it('rejects an unknown series', async () => {
    const r = await json('/api/v1/sensor-readings?series=smoothed');
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toEqual({ parameter: 'series', message: 'must be one of: raw, corrected' });
  });
});
