import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractCommand } from '../../client/extract.ts';
import { verifyCommand } from '../../client/verify.ts';
import { writeAggregateData } from '../helpers/aggregate-data.ts';
import { tempDir } from '../helpers/fixtures.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { captureIo, readManifestFile } from './harness.ts';

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

  it('refuses aggregate options without /aggregate, and Parquet for an aggregate', async () => {
    const base = ['--from', '2024-02-01', '--to', '2024-03-01', '--base-url', server.url, '--key', server.key];
    const a = captureIo();
    expect(await extractCommand(['hotspots', ...base, '--stats', 'frp.sum', '--out', path.join(out, 'x.csv')], {}, a.io)).toBe(2);
    expect(a.stderr()).toContain('--stats applies to an aggregate only, e.g. hotspots/aggregate');
    const b = captureIo();
    expect(await extractCommand(['hotspots/aggregate', ...base, '--out', path.join(out, 'x.parquet')], {}, b.io)).toBe(2);
    expect(b.stderr()).toContain('csv or geojson');
  });
});
