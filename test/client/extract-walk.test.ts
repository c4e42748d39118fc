import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractCommand } from '../../client/extract.ts';
import { hotspots } from '../../datasets/hotspots.ts';
import { hotspot, tempDir, writeChain } from '../helpers/fixtures.ts';
import { writeBulkHotspots, writeParquet } from '../helpers/parquet.ts';
import { CHAIN, parseCsv } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { captureIo, extractArgs, readManifestFile, sha256, writeTwoDays } from './harness.ts';

const ROW_LIMIT = 200;
const HAZARD = 'line one\nline two, "quoted"';
let server: TestServer;
let out: string;
let total: number;

beforeAll(async () => {
  const dir = await tempDir();
  total = (await writeTwoDays(dir)) + 1;
  // A record with a line break and quotes inside a field: one CSV record, two lines.
  await writeParquet(path.join(dir, 'hotspots/date=2025-07-01/hazard.parquet'), hotspots, [hotspot('hazard-1', '2025-07-01T05:00:30Z', { version: HAZARD })]);
  await writeChain(dir, 'hotspots', CHAIN);
  server = await startServer(dir, { ROW_LIMIT: String(ROW_LIMIT) });
  out = await tempDir('fire-api-extract-');
});
afterAll(() => server.close());

async function extract(file: string, extra: string[] = []) {
  const cap = captureIo();
  const code = await extractCommand(extractArgs(server, file, '2025-07-01', '2025-07-03', extra), {}, cap.io);
  expect(cap.stderr()).toBe('');
  expect(code).toBe(0);
  return readManifestFile(`${file}.manifest.json`);
}

describe('extract walks a window ten times the row limit', () => {
  it('CSV: one header, every row exactly once, manifest hashes match the served pages', async () => {
    const file = path.join(out, 'walk.csv');
    const m = await extract(file);
    const text = await readFile(file, 'utf8');
    const rows = parseCsv(text);
    expect(rows.filter((r) => r[0] === 'id')).toHaveLength(1);
    const ids = rows.slice(1).map((r) => r[0]);
    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);
    expect(rows.find((r) => r[0] === 'hazard-1')?.[17]).toBe(HAZARD);
    expect(m.pages.length).toBeGreaterThanOrEqual(10);
    expect(m).toMatchObject({ format: 'csv', rows: total, rowLimit: ROW_LIMIT, file: { name: 'walk.csv', sha256: sha256(text) } });
    // Each page re-fetched by hand: its rows hash is the bytes after its header, and the pages concatenate to the file.
    let body = '';
    for (const [i, p] of m.pages.entries()) {
      expect(p.request!.from).toBe(i === 0 ? '2025-07-01' : m.pages[i - 1]!.nextFrom);
      const served = await (await server.get(`/api/v1/hotspots?from=${encodeURIComponent(p.request!.from)}&to=2025-07-03&format=csv`)).text();
      const records = served.slice(served.indexOf('\n') + 1);
      expect(sha256(records)).toBe(p.rowsSha256);
      body += records;
    }
    expect(m.pages.at(-1)).toMatchObject({ truncated: false, nextFrom: null });
    expect(m.csvHeader + body).toBe(text);
    expect(existsSync(`${file}.partial`) || existsSync(`${file}.resume.json`)).toBe(false);
  });

  it('GeoJSON: one valid FeatureCollection, meta says assembled, one feature per line matching the page hashes', async () => {
    const file = path.join(out, 'walk.geojson');
    const m = await extract(file);
    const text = await readFile(file, 'utf8');
    const doc = JSON.parse(text) as { type: string; meta: any; features: { id: string; properties: any }[] };
    expect(doc.type).toBe('FeatureCollection');
    expect(doc.features).toHaveLength(total);
    expect(new Set(doc.features.map((f) => f.id)).size).toBe(total);
    expect(doc.features.find((f) => f.id === 'hazard-1')?.properties.version).toBe(HAZARD);
    expect(doc.meta).toMatchObject({ dataset: 'hotspots', window: { from: '2025-07-01T00:00:00Z', to: '2025-07-03T00:00:00Z' }, query: { country: null } });
    expect(doc.meta).toMatchObject({ truncated: false, returned: total, next: null, assembled: { pages: m.pages.length } });
    expect(doc.meta.assembled.dataVersions).toEqual([...new Set(m.pages.map((p) => p.dataVersion))]);
    expect(Object.keys(doc)).toEqual(['type', 'meta', 'features']);
    const lines = text.split('\n').slice(1, -2).map((l) => l.replace(/,$/, ''));
    expect(lines).toHaveLength(total);
    for (const p of m.pages) expect(sha256(lines.slice(p.firstRow, p.firstRow + p.returned).join('\n'))).toBe(p.rowsSha256);
    expect(m).toMatchObject({ format: 'geojson', rows: total, queryInEffect: { country: null }, file: { sha256: sha256(text) } });
  });

  it('refuses an existing output file unless --force; on a terminal, shows rows, windows, rate and elapsed time', async () => {
    const file = path.join(out, 'walk.csv');
    const cap = captureIo();
    expect(await extractCommand(extractArgs(server, file, '2025-07-01', '2025-07-03'), {}, cap.io)).toBe(1);
    expect(cap.stderr()).toMatch(/already exists/);
    const tty = captureIo();
    tty.io.stderrIsTTY = true;
    expect(await extractCommand(extractArgs(server, file, '2025-07-01', '2025-07-03', ['--force']), {}, tty.io)).toBe(0);
    expect(tty.stderr()).toMatch(new RegExp(`hotspots: ${total.toLocaleString('en-US')} rows, \\d+ windows done, [\\d,]+ rows/s, 00:0\\d elapsed`));
    expect(tty.stderr()).toMatch(/wrote .*walk\.csv: 2,001 rows from \d+ windows/);
  });

  it('stops with a clear message, and no output file, when more rows than the limit share one instant', async () => {
    const dir = await tempDir();
    await writeBulkHotspots(path.join(dir, 'hotspots/date=2025-07-01/a.parquet'), '2025-07-01', 40, 30, 60);
    const small = await startServer(dir, { ROW_LIMIT: '20' });
    try {
      const file = path.join(out, 'overflow.csv');
      const cap = captureIo();
      expect(await extractCommand(extractArgs(small, file, '2025-07-01', '2025-07-02'), {}, cap.io)).toBe(1);
      expect(cap.stderr()).toMatch(/more than 20 rows share its first instant.*ROW_LIMIT/s);
      expect(existsSync(file)).toBe(false);
    } finally {
      await small.close();
    }
  });
});
