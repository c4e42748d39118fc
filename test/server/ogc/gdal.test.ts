import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/fixtures.ts';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { gdal, needService } from '../../helpers/services.ts';

// GDAL's OAPIF driver (what QGIS, R sf and geopandas reach the API through): it reads the landing
// page, the collections, then walks each collection's items by their next links, with no datetime.
const GDAL = gdal();
const run = promisify(execFile);

let server: TestServer;
beforeAll(async () => {
  const dataDir = await writeSampleData();
  await writeBulkHotspots(path.join(dataDir, 'hotspots/date=2025-08-05/a.parquet'), '2025-08-05', 100, 25);
  await writeBulkHotspots(path.join(dataDir, 'hotspots/date=2025-08-06/a.parquet'), '2025-08-06', 60, 3);
  server = await startServer(dataDir, { ROW_LIMIT: '1000' });
}, 60_000);
afterAll(() => server.close());

type Auth = 'basic' | 'bearer';
const authEnv = (auth: Auth) => (auth === 'basic' ? { GDAL_HTTP_USERPWD: `qgis:${server.key}` } : { GDAL_HTTP_HEADERS: `Authorization: Bearer ${server.key}` });

async function ogr(program: string, args: string[], auth: Auth): Promise<string> {
  const { stdout } = await run(path.join(path.dirname(GDAL.path!), program), args, { env: { ...process.env, ...authEnv(auth), CPL_DEBUG: 'OFF' }, maxBuffer: 64 << 20 });
  return stdout;
}

const source = () => `OAPIF:${server.url}/api/v1/ogc`;
/** The `id` of every feature ogrinfo prints, in order. */
const idsOf = (listing: string) => [...listing.matchAll(/^ {2}id \(String\) = (.*)$/gm)].map((m) => m[1]!);

async function csvIds(query: string): Promise<string[]> {
  const text = await (await server.get(`/api/v1/hotspots?from=2025-07-01&to=2025-09-01&format=csv${query}`)).text();
  return text.trim().split('\n').slice(1).map((line) => line.split(',')[0]!);
}

describe("GDAL's OAPIF driver (ogrinfo, ogr2ogr)", () => {
  it.for(['basic', 'bearer'] as const)('lists the five collections with the key as %s', async (auth, ctx) => {
    needService(ctx, GDAL);
    const out = await ogr('ogrinfo', ['-ro', '-so', '-q', source()], auth);
    for (const name of ['hotspots', 'burnt-areas', 'fire-danger', 'sensor-stations', 'sensor-readings']) expect(out).toMatch(new RegExp(`^\\d+: ${name} `, 'm'));
  });

  it('takes each layer\'s extent from its collection: the box of its rows', async (ctx) => {
    needService(ctx, GDAL);
    // The bulk days lie in [-8.076, -8.0] x [39.0, 39.099]; the sample rows at (-8.25, 39.5).
    const summary = await ogr('ogrinfo', ['-ro', '-so', source(), 'hotspots'], 'bearer');
    expect(summary).toMatch(/^Extent: \(-8\.250000, 39\.000000\) - \(-8\.000000, 39\.500000\)$/m);
  });

  it('reads every collection three features a page: as many features as the v1 CSV of the whole collection has rows', async (ctx) => {
    needService(ctx, GDAL);
    for (const name of ['hotspots', 'burnt-areas', 'fire-danger', 'sensor-stations', 'sensor-readings']) {
      const listing = await ogr('ogrinfo', ['-ro', '-q', '-oo', 'PAGE_SIZE=3', source(), name], 'bearer');
      const features = (listing.match(/^OGRFeature\(/gm) ?? []).length;
      const window = name === 'sensor-stations' ? '' : '&from=2000-01-01&to=2030-01-01';
      const csv = await (await server.get(`/api/v1/${name}?format=csv${window}`)).text();
      const rows = csv.trim().split('\n').length - 1;
      expect(rows, name).toBeGreaterThan(0);
      expect(features, name).toBe(rows);
    }
  });

  it('reads hotspots seven features a page: exactly the rows and ids of the CSV, in order', async (ctx) => {
    needService(ctx, GDAL);
    const ids = idsOf(await ogr('ogrinfo', ['-ro', '-q', '-oo', 'PAGE_SIZE=7', source(), 'hotspots'], 'basic'));
    expect(ids).toHaveLength(160 + (await csvIds('')).length - 160);
    expect(ids).toEqual(await csvIds(''));
  });

  it('-spat sends a bbox: the rows of the CSV with the same bbox', async (ctx) => {
    needService(ctx, GDAL);
    const ids = idsOf(await ogr('ogrinfo', ['-ro', '-q', '-oo', 'PAGE_SIZE=50', '-spat', '-8.05', '39.02', '-8.0', '39.06', source(), 'hotspots'], 'bearer'));
    const expected = await csvIds('&bbox=-8.05,39.02,-8.0,39.06');
    expect(expected.length).toBeGreaterThan(10);
    expect(ids).toEqual(expected);
  });

  it('ogr2ogr writes a GeoPackage with the same features', async (ctx) => {
    needService(ctx, GDAL);
    const gpkg = path.join(await tempDir('ogc-gpkg-'), 'hotspots.gpkg');
    await ogr('ogr2ogr', ['-f', 'GPKG', gpkg, '-oo', 'PAGE_SIZE=40', source(), 'hotspots'], 'basic');
    const ids = idsOf(await ogr('ogrinfo', ['-ro', '-q', gpkg, 'hotspots'], 'basic'));
    expect(ids).toEqual(await csvIds(''));
    expect(await ogr('ogrinfo', ['-ro', '-q', gpkg, 'hotspots'], 'basic')).toMatch(/POINT \(-8\.?\d* 39\.?\d*\)/);
  });
});
