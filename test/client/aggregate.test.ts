import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractCommand } from '../../client/extract.ts';
import { verifyCommand } from '../../client/verify/verify.ts';
import { writeAggregateData } from '../helpers/aggregate-data.ts';
import { tempDir } from '../helpers/fixtures.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { fetchBytes, hyparquetKeyValues, hyparquetRows, duckdbParquet, PARQUET } from '../helpers/columnar.ts';
import { captureIo, readManifestFile, sha256 } from './harness.ts';

let server: TestServer;
let dataDir: string;
let out: string;
beforeAll(async () => {
  dataDir = await writeAggregateData();
  // Pages of at most five groups: the walk crosses many cuts.
  server = await startServer(dataDir, { AGGREGATE_ROW_LIMIT: '5' });
  out = await tempDir('fire-api-extract-');
}, 60_000);
afterAll(() => server.close());

const AGGREGATE = ['--from', '2024-02-01', '--to', '2025-02-01', '--interval', 'week', '--group-by', 'country', '--stats', 'frp.sum,frp.max'];

describe('fire-api extract of an aggregate', () => {
  it('walks the cuts into one file equal to the whole answer, with a manifest that cites it and verifies', async () => {
    const file = path.join(out, 'weekly.csv');
    const args = ['hotspots/aggregate', ...AGGREGATE, '--out', file, '--base-url', server.url, '--key', server.key];
    expect(await extractCommand(args, {}, captureIo().io)).toBe(0);
    const m = await readManifestFile(`${file}.manifest.json`);
    expect(m.dataset).toBe('hotspots/aggregate');
    expect(m.pages.length).toBeGreaterThan(2);
    expect(m.parameters).toEqual({ interval: 'week', groupBy: 'country', stats: 'frp.sum,frp.max' });
    expect(m.citation?.bibtex).toMatch(/@misc\{fireapi_hotspotsaggregate_/);
    const whole = await startServer(dataDir);
    const once = await (await whole.get('/api/v1/hotspots/aggregate?from=2024-02-01&to=2025-02-01&interval=week&groupBy=country&stats=frp.sum,frp.max&format=csv')).text();
    await whole.close();
    expect(await readFile(file, 'utf8')).toBe(once);
    expect(once.split('\n')[0]).toBe('bucket,country,count,frp.sum,frp.max');
    expect(await verifyCommand([`${file}.manifest.json`, '--key', server.key], {}, captureIo().io)).toBe(0);
  });

  it('refuses aggregate options without /aggregate', async () => {
    const base = ['--from', '2024-02-01', '--to', '2024-03-01', '--base-url', server.url, '--key', server.key];
    const a = captureIo();
    expect(await extractCommand(['hotspots', ...base, '--stats', 'frp.sum', '--out', path.join(out, 'x.csv')], {}, a.io)).toBe(2);
    expect(a.stderr()).toContain('--stats applies to an aggregate only, e.g. hotspots/aggregate');
  });
});

/** The whole answer (no row limit) of `query` as Parquet. */
async function wholeParquet(query: string): Promise<Buffer> {
  const whole = await startServer(dataDir);
  try {
    return (await fetchBytes(whole.get, query, PARQUET)).bytes;
  } finally {
    await whole.close();
  }
}

/** Rows read back, geometry included (hyparquet decodes GeoParquet's WKB), as comparable text. */
const comparable = (rows: Record<string, unknown>[]) => rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)));

describe('fire-api extract of an aggregate as Parquet', () => {
  it('walks the cuts into one GeoParquet file holding the whole answer\'s groups and cell polygons, cited and verified', async () => {
    const file = path.join(out, 'cells.parquet');
    const grid = ['--from', '2024-02-01', '--to', '2025-02-01', '--interval', 'week', '--group-by', 'grid', '--cell', '10', '--stats', 'frp.sum'];
    // A week holds up to 7 cells of 10°: pages of at most ten groups are cut after every week.
    const cells = await startServer(dataDir, { AGGREGATE_ROW_LIMIT: '10' });
    const cap = captureIo();
    const code = await extractCommand(['hotspots/aggregate', ...grid, '--out', file, '--base-url', cells.url, '--key', cells.key], {}, cap.io).finally(() => cells.close());
    expect(cap.stderr()).toBe('');
    expect(code).toBe(0);
    const m = await readManifestFile(`${file}.manifest.json`);
    const bytes = await readFile(file);
    expect(m).toMatchObject({ dataset: 'hotspots/aggregate', format: 'parquet', csvHeader: null, file: { name: 'cells.parquet', bytes: bytes.length, sha256: sha256(bytes) } });
    expect(m.pages.length).toBeGreaterThan(2);
    expect(m.citation?.bibtex).toMatch(/@misc\{fireapi_hotspotsaggregate_/);

    const once = await wholeParquet('/api/v1/hotspots/aggregate?from=2024-02-01&to=2025-02-01&interval=week&groupBy=grid&cell=10&stats=frp.sum');
    const [walked, whole] = [await hyparquetRows(bytes), await hyparquetRows(once)];
    expect(walked).toHaveLength(m.rows);
    expect(comparable(walked)).toEqual(comparable(whole));
    expect(walked.some((r) => r.geometry === null) && walked.some((r) => (r.geometry as { type?: string } | null)?.type === 'Polygon')).toBe(true);
    const [duck, duckWhole] = [await duckdbParquet(out, bytes), await duckdbParquet(out, once)];
    expect(duck.types).toEqual(duckWhole.types);
    expect(duck.rows.map((r) => r.geometry_wkt)).toEqual(duckWhole.rows.map((r) => r.geometry_wkt));
    // One geo block over every page: the whole answer's.
    expect(JSON.parse(hyparquetKeyValues(bytes).geo!)).toEqual(JSON.parse(hyparquetKeyValues(once).geo!));
    expect(JSON.parse(hyparquetKeyValues(bytes)['fire_api:meta']!)).toMatchObject({ dataset: 'hotspots/aggregate', returned: m.rows, truncated: false, next: null });
    const again = await startServer(dataDir, { AGGREGATE_ROW_LIMIT: '10' });
    const verified = await verifyCommand([`${file}.manifest.json`, '--key', again.key, '--base-url', again.url], {}, captureIo().io).finally(() => again.close());
    expect(verified).toBe(0);
  });

  it('saves station aggregates with the stations\' points, and aggregates without geometry as plain Parquet', async () => {
    const cases = [
      { name: 'stations.parquet', dataset: 'sensor-readings/aggregate', args: ['--from', '2024-02-29', '--to', '2024-03-02', '--interval', 'hour', '--group-by', 'stationId', '--stats', 'airTemperatureC.mean'], query: '/api/v1/sensor-readings/aggregate?from=2024-02-29&to=2024-03-02&interval=hour&groupBy=stationId&stats=airTemperatureC.mean&simulated=false' },
      { name: 'weekly.parquet', dataset: 'hotspots/aggregate', args: AGGREGATE, query: '/api/v1/hotspots/aggregate?from=2024-02-01&to=2025-02-01&interval=week&groupBy=country&stats=frp.sum,frp.max' },
    ];
    for (const c of cases) {
      const file = path.join(out, c.name);
      expect(await extractCommand([c.dataset, ...c.args, '--out', file, '--base-url', server.url, '--key', server.key], {}, captureIo().io)).toBe(0);
      const m = await readManifestFile(`${file}.manifest.json`);
      expect(m.pages.length).toBeGreaterThan(1);
      const [bytes, once] = [await readFile(file), await wholeParquet(c.query)];
      const rows = await hyparquetRows(bytes);
      expect(comparable(rows)).toEqual(comparable(await hyparquetRows(once)));
      const types = new Set(rows.map((r) => (r.geometry as { type?: string } | null | undefined)?.type ?? String(r.geometry)));
      // ST0099 is not in the registry: its groups' geometry is null.
      expect([...types].sort()).toEqual(c.name === 'weekly.parquet' ? ['undefined'] : ['Point', 'null']);
      expect(hyparquetKeyValues(bytes).geo === undefined).toBe(c.name === 'weekly.parquet');
      expect(await verifyCommand([`${file}.manifest.json`, '--key', server.key], {}, captureIo().io)).toBe(0);
    }
  });
});
