import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/fixtures.ts';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { gdal, needService } from '../../helpers/services.ts';

// An aggregate read by GDAL's GeoJSON driver straight from its URL (what `ogr2ogr`, QGIS's "add
// vector layer" from a URL and geopandas' read_file do), the key sent as a header.
const GDAL = gdal();
const run = promisify(execFile);

let server: TestServer;
beforeAll(async () => {
  const dataDir = await writeSampleData();
  await writeBulkHotspots(path.join(dataDir, 'hotspots/date=2025-08-05/a.parquet'), '2025-08-05', 3000, 10, 20);
  await writeBulkHotspots(path.join(dataDir, 'hotspots/date=2025-08-06/a.parquet'), '2025-08-06', 500, 3);
  server = await startServer(dataDir);
}, 60_000);
afterAll(() => server.close());

const WINDOW = 'from=2025-08-05&to=2025-08-07';
const AGGREGATE = `/api/v1/hotspots/aggregate?${WINDOW}&interval=day&groupBy=grid&cell=0.01&stats=count,frp.sum,frp.max`;

async function ogr(program: string, args: string[]): Promise<string> {
  const env = { ...process.env, GDAL_HTTP_HEADERS: `Authorization: Bearer ${server.key}`, CPL_DEBUG: 'OFF' };
  return (await run(path.join(path.dirname(GDAL.path!), program), args, { env, maxBuffer: 64 << 20 })).stdout;
}

/** Each feature ogrinfo prints: its fields by name and its polygon's vertices. */
function features(listing: string): { fields: Record<string, string>; ring: number[][] }[] {
  return listing.split(/^OGRFeature\(/m).slice(1).map((block) => {
    const fields = Object.fromEntries([...block.matchAll(/^ {2}(\S+) \(\w+\) = (.*)$/gm)].map((m) => [m[1]!, m[2]!]));
    const wkt = /POLYGON \(\((.*)\)\)/.exec(block)?.[1] ?? '';
    return { fields, ring: wkt.split(',').map((p) => p.trim().split(' ').map(Number)) };
  });
}

/** The aggregate's CSV rows as objects by header. */
async function csvRows(): Promise<Record<string, string>[]> {
  const [header, ...lines] = (await (await server.get(`${AGGREGATE}&format=csv`)).text()).trim().split('\n');
  const names = header!.split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [names[i]!, v])));
}

describe("an aggregate read by GDAL's GeoJSON driver", () => {
  it('gives one polygon per group: the cell whose south-west corner the CSV names, with its counts and stats', async (ctx) => {
    needService(ctx, GDAL);
    const read = features(await ogr('ogrinfo', ['-ro', '-al', '-q', `${server.url}${AGGREGATE}`]));
    const rows = await csvRows();
    expect(rows.length).toBeGreaterThan(50);
    expect(read).toHaveLength(rows.length);
    read.forEach((f, i) => {
      const row = rows[i]!;
      expect([f.fields.cellLon, f.fields.cellLat, f.fields.count].map(Number)).toEqual([row.cellLon, row.cellLat, row.count].map(Number));
      expect(Number(f.fields['frp.sum'])).toBe(Number(row['frp.sum']));
      expect(Number(f.fields['frp.max'])).toBe(Number(row['frp.max']));
      // Closed, counter-clockwise, starting at the south-west corner.
      expect(f.ring).toHaveLength(5);
      expect(f.ring[0]).toEqual([Number(row.cellLon), Number(row.cellLat)]);
      expect(f.ring[4]).toEqual(f.ring[0]);
      expect(f.ring[1]![0]).toBeGreaterThan(f.ring[0]![0]!);
      expect(f.ring[2]![1]).toBeGreaterThan(f.ring[1]![1]!);
    });
    const data = (await (await server.get(`/api/v1/hotspots?${WINDOW}&format=csv`)).text()).trim().split('\n').length - 1;
    expect(read.reduce((n, f) => n + Number(f.fields.count), 0)).toBe(data);
  });

  it('ogr2ogr saves it as a GeoPackage with the same features', async (ctx) => {
    needService(ctx, GDAL);
    const gpkg = path.join(await tempDir('aggregate-gpkg-'), 'cells.gpkg');
    await ogr('ogr2ogr', ['-f', 'GPKG', gpkg, `${server.url}${AGGREGATE}`, '-nln', 'cells']);
    const saved = features(await ogr('ogrinfo', ['-ro', '-q', gpkg, 'cells']));
    const direct = features(await ogr('ogrinfo', ['-ro', '-al', '-q', `${server.url}${AGGREGATE}`]));
    expect(saved.map((f) => [f.fields.cellLon, f.fields.cellLat, f.fields.count, f.ring])).toEqual(direct.map((f) => [f.fields.cellLon, f.fields.cellLat, f.fields.count, f.ring]));
  });
});
