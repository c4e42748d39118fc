import { existsSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractCommand } from '../../client/extract.ts';
import { verifyCommand } from '../../client/verify/verify.ts';
import { burntAreas } from '../../datasets/burnt-areas.ts';
import { hotspots } from '../../datasets/hotspots.ts';
import { wireColumns } from '../../datasets/index.ts';
import { hotspot, tempDir, writeChain } from '../helpers/fixtures.ts';
import { csvRows, duckdbParquet, fetchBytes, firstDifference, hyparquetKeyValues, hyparquetRows, objectRows, PARQUET } from '../helpers/columnar.ts';
import { writeParquet } from '../helpers/parquet.ts';
import { CHAIN } from '../helpers/sample-data.ts';
import { writeFilterData } from '../server/filters-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { captureIo, extractArgs, readManifestFile, sha256, writeTwoDays } from './harness.ts';

const ROW_LIMIT = 200;
let server: TestServer;
let out: string;
let total: number;

beforeAll(async () => {
  const dir = await tempDir();
  total = (await writeTwoDays(dir)) + 1;
  await writeParquet(path.join(dir, 'hotspots/date=2025-07-02/far.parquet'), hotspots, [hotspot('far-east', '2025-07-02T23:59:59.999999Z', { longitude: 179.25, latitude: -45.5 })]);
  await writeChain(dir, 'hotspots', CHAIN);
  server = await startServer(dir, { ROW_LIMIT: String(ROW_LIMIT) });
  out = await tempDir('fire-api-extract-parquet-');
});
afterAll(() => server.close());

async function extract(s: TestServer, file: string, args: string[]) {
  const cap = captureIo();
  const code = await extractCommand(args, {}, cap.io);
  expect(cap.stderr()).toBe('');
  expect(code).toBe(0);
  return readManifestFile(`${file}.manifest.json`);
}

/** The bytes of a Parquet file between its leading PAR1 and its footer. */
const rowGroupBytes = (b: Buffer) => b.subarray(4, b.length - 8 - b.readUInt32LE(b.length - 8));

describe('extract --format parquet: one file for the whole walk', () => {
  it('holds the rows of the CSV extract in the same order, read back by hyparquet and DuckDB, with GeoParquet metadata over every page', async () => {
    const csvFile = path.join(out, 'walk.csv');
    await extract(server, csvFile, extractArgs(server, csvFile, '2025-07-01', '2025-07-03'));
    const csv = csvRows(hotspots, await readFile(csvFile, 'utf8'));
    expect(csv).toHaveLength(total);

    // The format follows the file name, as csv does.
    const file = path.join(out, 'walk.parquet');
    const m = await extract(server, file, extractArgs(server, file, '2025-07-01', '2025-07-03'));
    expect(m.pages.length).toBeGreaterThanOrEqual(10);
    const bytes = await readFile(file);
    expect(m).toMatchObject({ format: 'parquet', rows: total, csvHeader: null, file: { name: 'walk.parquet', bytes: bytes.length, sha256: sha256(bytes) } });
    expect(firstDifference(objectRows(hotspots, await hyparquetRows(bytes)), csv)).toBeNull();
    const duck = await duckdbParquet(out, bytes);
    expect(firstDifference(objectRows(hotspots, duck.rows), csv)).toBeNull();
    expect(duck.types.acquiredAtUtc).toBe('TIMESTAMP WITH TIME ZONE');
    expect(duck.types.geometry).toMatch(/^GEOMETRY/);

    const kv = hyparquetKeyValues(bytes);
    const meta = JSON.parse(kv['fire_api:meta']!);
    expect(meta).toMatchObject({ dataset: 'hotspots', truncated: false, returned: total, next: null, assembled: { pages: m.pages.length } });
    expect(meta.assembled.dataVersions).toEqual([...new Set(m.pages.map((p) => p.dataVersion))]);
    const geo = JSON.parse(kv.geo!);
    const lon = wireIndex('longitude');
    const lat = wireIndex('latitude');
    const xs = csv.map((r) => Number(r[lon]));
    const ys = csv.map((r) => Number(r[lat]));
    // The far-east point is on the last page only: the box covers every page, not the first.
    expect(geo).toEqual({ version: '1.1.0', primary_column: 'geometry', columns: { geometry: { encoding: 'WKB', geometry_types: ['Point'], bbox: [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)] } } });
    expect(Math.max(...xs)).toBe(179.25);

    // Each page re-fetched by hand: its hash is its row-group bytes, which the file holds in order.
    let body = Buffer.alloc(0);
    for (const p of m.pages) {
      const served = await fetchBytes(server.get, `/api/v1/hotspots?from=${encodeURIComponent(p.request!.from)}&to=2025-07-03`, PARQUET);
      expect(sha256(rowGroupBytes(served.bytes))).toBe(p.rowsSha256);
      body = Buffer.concat([body, rowGroupBytes(served.bytes)]);
    }
    expect(rowGroupBytes(bytes).equals(body)).toBe(true);
    expect(existsSync(`${file}.partial`) || existsSync(`${file}.resume.json`) || existsSync(`${file}.assembling`)).toBe(false);
  });

  it('the same walk again gives the same bytes, and verify finds every window identical', async () => {
    const a = path.join(out, 'a.parquet');
    const b = path.join(out, 'b.parquet');
    await extract(server, a, extractArgs(server, a, '2025-07-01', '2025-07-02', ['--format', 'parquet']));
    await extract(server, b, extractArgs(server, b, '2025-07-01', '2025-07-02', ['--format', 'parquet']));
    expect((await readFile(a)).equals(await readFile(b))).toBe(true);
    const cap = captureIo();
    expect(await verifyCommand([`${a}.manifest.json`, '--json'], { FIRE_API_KEY: server.key }, cap.io)).toBe(0);
    const report = JSON.parse(cap.stdout()) as { windows: { identical: boolean }[]; file: { state: string } };
    expect(report.windows.length).toBeGreaterThan(1);
    expect(report.windows.every((w) => w.identical)).toBe(true);
    expect(report.file.state).toBe('matches');
  });

  it('an empty window is a valid file with the columns and no rows', async () => {
    const file = path.join(out, 'empty.parquet');
    const m = await extract(server, file, extractArgs(server, file, '2025-06-01', '2025-06-02'));
    expect(m.rows).toBe(0);
    const duck = await duckdbParquet(out, await readFile(file));
    expect(duck.rows).toEqual([]);
    expect(Object.keys(duck.types)).toEqual(expect.arrayContaining(['id', 'acquiredAtUtc', 'geometry']));
  });

  it('burnt-areas: perimeters (polygons, holes, a multipolygon) as GeoParquet, the rows of the CSV extract', async () => {
    const sample = await startServer(await writeFilterData(), { ROW_LIMIT: '2' });
    try {
      const args = (f: string) => ['burnt-areas', '--from', '2025-08-01', '--to', '2025-08-02', '--out', f, '--base-url', sample.url, '--key', sample.key];
      const csvFile = path.join(out, 'areas.csv');
      const file = path.join(out, 'areas.parquet');
      await extract(sample, csvFile, args(csvFile));
      const m = await extract(sample, file, args(file));
      expect(m.pages.length).toBeGreaterThan(1);
      const bytes = await readFile(file);
      const csv = csvRows(burntAreas, await readFile(csvFile, 'utf8'));
      expect(objectRows(burntAreas, await hyparquetRows(bytes))).toEqual(csv);
      expect(csv.length).toBeGreaterThan(2);
      expect(JSON.parse(hyparquetKeyValues(bytes).geo!).columns.geometry.geometry_types).toEqual(['MultiPolygon', 'Polygon']);
    } finally {
      await sample.close();
    }
  });

  it('a kept window whose bytes were damaged on disk is never assembled: the rerun stops with a clear message', async () => {
    // A proxy that passes the first three requests, then answers 503 until told otherwise.
    let passed = 0;
    let failing = true;
    const proxy = http.createServer((req, res) => {
      if (failing && ++passed > 3) return void res.writeHead(503, { 'retry-after': '0', 'content-type': 'application/problem+json' }).end('{}');
      http.get(`${server.url}${req.url}`, { headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const file = path.join(out, 'damaged.parquet');
      const args = extractArgs(server, file, '2025-07-01', '2025-07-03', ['--retries', '1']).map((a) => (a === server.url ? `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` : a));
      const first = captureIo();
      expect(await extractCommand(args, {}, first.io)).toBe(1);
      expect(first.stderr()).toMatch(/3 completed windows are kept/);
      // One byte inside the first window's row groups flips, as a failing disk would do it.
      const partial = await open(`${file}.partial`, 'r+');
      const byte = Buffer.alloc(1);
      await partial.read(byte, 0, 1, 100);
      await partial.write(Buffer.from([byte[0]! ^ 0xff]), 0, 1, 100);
      await partial.close();
      failing = false;
      const rerun = captureIo();
      expect(await extractCommand(args, {}, rerun.io)).toBe(1);
      expect(rerun.stderr()).toMatch(/window 1 in damaged\.parquet\.partial no longer holds the rows it was served with; pass --restart/);
      expect(existsSync(file)).toBe(false);
      expect(existsSync(`${file}.manifest.json`)).toBe(false);
    } finally {
      await new Promise((r) => proxy.close(r));
    }
  });

  it('--format must be csv, geojson or parquet', async () => {
    const cap = captureIo();
    expect(await extractCommand(extractArgs(server, path.join(out, 'x.arrow'), '2025-07-01', '2025-07-02', ['--format', 'arrow']), {}, cap.io)).toBe(2);
    expect(cap.stderr()).toMatch(/--format must be csv, geojson or parquet/);
  });
});

const wireIndex = (name: string) => {
  const i = wireColumns(hotspots).findIndex((c) => c.name === name);
  if (i < 0) throw new Error(`no column ${name}`);
  return i;
};
