import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { Engine } from '../../../queries/engine/engine.ts';
import type { DataFile } from '../../../queries/files/data-file.ts';
import { hashFooter } from '../../../queries/files/footer.ts';
import { FORMATS } from '../../../queries/formats.ts';
import { compileRows, type QuerySpec } from '../../../queries/sql/compile.ts';
import { compileCopy, CSV_COPY } from '../../../queries/sql/compile-copy.ts';
import { copyInto } from '../../../queries/encode/copy-stream.ts';
import { writeBulkHotspotDays } from '../../helpers/sample-data.ts';
import { until } from '../../helpers/until.ts';
import { renderingsPerTest } from '../../helpers/renderings.ts';

/** The renderings stores a test makes, closed after it (and their files' handles). */
const renderings = renderingsPerTest();

// Text that is not ASCII (place names): the disk budget counts bytes, not JavaScript string lengths.
let engine: Engine;
let spec: QuerySpec;
let dataDir: string;
let file: DataFile;
let hashes: Map<string, string>;

beforeAll(async () => {
  dataDir = await writeBulkHotspotDays(1);
  engine = await Engine.create({ dataDir, tempDir: path.join(dataDir, 'tmp'), threads: 1, connections: 2, memoryLimit: '256MB', maxQueued: 10 });
  spec = { descriptor: hotspots, dataDir, filters: [], params: {}, stationFiles: null };
  // Under the engine's TEMP_DIR: DuckDB writes nowhere else. The same prefix on every id keeps the dataset's order.
  const source = path.join(dataDir, 'hotspots/date=2025-08-01/a.parquet');
  const target = path.join(dataDir, 'tmp', 'names', 'a.parquet');
  await mkdir(path.dirname(target), { recursive: true });
  const lease = await engine.acquire();
  try {
    await lease.connection.run(`COPY (SELECT * REPLACE ('Ñuñoa–東京-' || id AS id) FROM read_parquet('${source}') ORDER BY acquiredAtUtc, id) TO '${target}' (FORMAT parquet)`);
  } finally {
    lease.release();
  }
  const s = await stat(target);
  file = { path: target, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
  hashes = new Map([[target, await hashFooter(file)]]);
}, 60_000);
afterAll(() => engine?.close());

const all = { from: null, to: null, filters: [] };

describe('renderings of text that is not ASCII', () => {
  it('the disk held is the bytes on disk, and the CSV lines are the bytes DuckDB\'s COPY writes', async () => {
    const dir = path.join(dataDir, 'tmp', 'renderings-names');
    const store = renderings(dir, 64 * 1024 * 1024);
    store.renderLater(engine, 'geojson', spec, [file], hashes);
    store.renderLater(engine, 'csv', spec, [file], hashes);
    expect(await until(() => store.pending === 0)).toBe(true);
    expect([store.files, store.failures]).toEqual([2, 0]);
    const names = await readdir(dir);
    const onDisk = (await Promise.all(names.map(async (n) => (await stat(path.join(dir, n))).size))).reduce((a, b) => a + b, 0);
    expect(store.size).toBe(onDisk);
    const csv = (await store.read('csv', [file], hashes, all))!;
    // Each id holds characters of two and three bytes: as a string, the text is shorter than its bytes.
    expect(csv.bytes.length - csv.bytes.toString('utf8').length).toBeGreaterThanOrEqual(5 * csv.returned);
    const lease = await engine.acquire();
    try {
      const target = path.join(dataDir, 'tmp', 'names-copy.csv');
      const q = compileRows({ spec, files: [file.path], select: FORMATS.csv.rows, from: null, to: null, order: 'stored' });
      expect(await copyInto(lease.connection, compileCopy(q, CSV_COPY, target, path.dirname(target)))).toBe(csv.returned);
      expect(csv.bytes.equals(await readFile(target))).toBe(true);
    } finally {
      lease.release();
    }
  });

  it('a budget the rendering fits in bytes is kept; one byte less is refused, though the text counted in characters would fit', async () => {
    const probe = renderings(path.join(dataDir, 'tmp', 'renderings-probe'), 64 * 1024 * 1024);
    probe.renderLater(engine, 'geojson', spec, [file], hashes);
    expect(await until(() => probe.pending === 0)).toBe(true);
    const bytes = probe.size;
    const chars = (await probe.read('geojson', [file], hashes, all))!.bytes.toString('utf8').length + 1;
    expect(chars).toBeLessThan(bytes - 1);
    const exact = renderings(path.join(dataDir, 'tmp', 'renderings-exact'), bytes);
    const short = renderings(path.join(dataDir, 'tmp', 'renderings-short'), bytes - 1);
    // One after the other: the engine renders on one background connection.
    for (const s of [exact, short]) {
      s.renderLater(engine, 'geojson', spec, [file], hashes);
      expect(await until(() => s.pending === 0)).toBe(true);
    }
    expect([exact.files, exact.size, short.files, short.size, short.failures]).toEqual([1, bytes, 0, 0, 0]);
  });

  it('a rendering cut short is never kept: two renderings at once on the one background connection cut each other\'s rows', async () => {
    // Made before: both renderings then share it (made by the first of them, each could get its own).
    await engine.backgroundConnection();
    const stores = [0, 1].map((i) => renderings(path.join(dataDir, 'tmp', `renderings-cut-${i}`), 64 * 1024 * 1024));
    for (const s of stores) s.renderLater(engine, 'geojson', spec, [file], hashes);
    expect(await until(() => stores.every((s) => s.pending === 0))).toBe(true);
    for (const s of stores) {
      const read = await s.read('geojson', [file], hashes, all);
      // Kept: whole. Not kept: counted as a failure of the moment, so asked again it is rendered.
      expect(read === null ? s.failures : read.returned).toBe(read === null ? 1 : 20_000);
      if (read === null) {
        s.renderLater(engine, 'geojson', spec, [file], hashes);
        expect(await until(() => s.pending === 0)).toBe(true);
        expect((await s.read('geojson', [file], hashes, all))!.returned).toBe(20_000);
      }
    }
  });
});
