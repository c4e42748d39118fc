import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../queries/engine/engine.ts';
import { Renderings } from '../../../queries/renderings/renderings.ts';
import { runStaged } from '../../../queries/extract/staged-run.ts';
import type { DataFile } from '../../../queries/files/data-file.ts';
import { hashFooter } from '../../../queries/files/footer.ts';
import { FORMATS } from '../../../queries/formats.ts';
import { compileRows, type QuerySpec } from '../../../queries/sql/compile.ts';
import { compileCopy, CSV_COPY } from '../../../queries/sql/compile-copy.ts';
import { copyInto } from '../../../queries/encode/copy-stream.ts';
import { compileStaged } from '../../../queries/sql/compile-staged.ts';
import { featureBytes } from '../../../queries/extract/in-memory.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { renderingDays, renderingsPerTest } from '../../helpers/renderings.ts';
import { until } from '../../helpers/until.ts';

const made = renderingsPerTest();

// Renderings made on the engine's own background connection from real Parquet, read back by byte range.
let engine: Engine;
let dataDir: string;
let spec: QuerySpec;
const files: DataFile[] = [];
const hashes = new Map<string, string>();
const DAYS = ['2025-08-01', '2025-08-02'];
const us = (iso: string) => BigInt(Date.parse(iso)) * 1000n;

beforeAll(async () => {
  const days = await renderingDays(2);
  ({ engine, spec } = days);
  dataDir = days.dataDir;
  files.push(...days.files);
  for (const [file, hash] of days.hashes) hashes.set(file, hash);
}, 60_000);
afterAll(() => engine?.close());


const staged = async (f: DataFile, from: bigint, to: bigint) => {
  const lease = await engine.acquire();
  try {
    const q = compileStaged({ spec, files: [f.path], select: FORMATS.geojson.rows, from, to, order: 'stored', bindFiles: true })!;
    return featureBytes(await runStaged(lease.connection, q, ''));
  } finally {
    lease.release();
  }
};

/** The window's CSV rows as the whole-window path writes them (COPY into a temp file). */
const copied = async (paths: string[], from: bigint, to: bigint) => {
  const lease = await engine.acquire();
  try {
    const target = path.join(dataDir, 'tmp', `copy-${from}.csv`);
    const q = compileRows({ spec, files: paths, select: FORMATS.csv.rows, from, to, order: 'stored' });
    const rows = await copyInto(lease.connection, compileCopy(q, CSV_COPY, target, path.dirname(target)));
    return { rows, bytes: await readFile(target) };
  } finally {
    lease.release();
  }
};

describe('renderings: budgeted disk, keyed by the file, never a pool connection', () => {
  it('a file not rendered is a miss; once rendered, a window is its staged bytes, across two files too', async () => {
    const store = made(await tempDir(), 64 * 1024 * 1024);
    const [from, to] = [us('2025-08-01T01:00:00Z'), us('2025-08-02T01:00:00Z')];
    expect(await store.read('geojson', files, hashes, { from, to, filters: [] })).toBeNull();
    store.renderLater(engine, 'geojson', spec, files, hashes);
    expect(engine.busy).toBe(0);
    expect(await until(() => store.files === 2)).toBe(true);
    const read = (await store.read('geojson', files, hashes, { from, to, filters: [] }))!;
    const expected = Buffer.concat([await staged(files[0]!, from, to), Buffer.from(','), await staged(files[1]!, from, to)]);
    expect(read.returned).toBeGreaterThan(1000);
    expect(read.bytes.equals(expected)).toBe(true);
    expect([store.hits, store.misses, store.failures]).toEqual([1, 1, 0]);
    const empty = await store.read('geojson', files, hashes, { from: us('2025-08-03T00:00:00Z'), to: us('2025-08-03T01:00:00Z'), filters: [] });
    expect([empty?.returned, empty?.bytes.length]).toEqual([0, 0]);
  });

  it('CSV lines: a window over two files is the bytes DuckDB\'s COPY writes; each format is its own rendering', async () => {
    // DuckDB writes the CSV it is cut from: under the engine's TEMP_DIR, as the server's renderings are.
    const dir = path.join(dataDir, 'tmp', 'renderings-csv');
    const store = made(dir, 64 * 1024 * 1024);
    const [from, to] = [us('2025-08-01T22:00:00Z'), us('2025-08-02T03:00:00Z')];
    store.renderLater(engine, 'geojson', spec, files, hashes);
    expect(await until(() => store.files === 2)).toBe(true);
    expect(await store.read('csv', files, hashes, { from, to, filters: [] })).toBeNull();
    store.renderLater(engine, 'csv', spec, files, hashes);
    expect(await until(() => store.files === 4)).toBe(true);
    const read = (await store.read('csv', files, hashes, { from, to, filters: [] }))!;
    const expected = await copied(files.map((f) => f.path), from, to);
    expect(read.returned).toBe(expected.rows);
    expect(read.returned).toBeGreaterThan(1000);
    expect(read.bytes.equals(expected.bytes)).toBe(true);
    // Only the renderings stay: the scratch copy each CSV rendering is cut from is gone.
    expect((await readdir(dir)).filter((f) => !/\.(geojson|csv)$/.test(f))).toEqual([]);
  });

  it('another identity or footer is another key: never answered from the rendering of the file as it was', async () => {
    const store = made(await tempDir(), 64 * 1024 * 1024);
    store.renderLater(engine, 'geojson', spec, [files[0]!], hashes);
    expect(await until(() => store.files === 1)).toBe(true);
    const window = { from: us('2025-08-01T01:00:00Z'), to: us('2025-08-01T02:00:00Z'), filters: [] };
    expect(await store.read('geojson', [files[0]!], hashes, window)).not.toBeNull();
    expect(await store.read('geojson', [{ ...files[0]!, mtimeMs: files[0]!.mtimeMs + 1 }], hashes, window)).toBeNull();
    expect(await store.read('geojson', [{ ...files[0]!, ino: (files[0]!.ino ?? 0) + 1 }], hashes, window)).toBeNull();
    expect(await store.read('geojson', [files[0]!], new Map([[files[0]!.path, 'another footer']]), window)).toBeNull();
  });

  it('a file replaced between its listing and its rendering is never kept under the identity listed', async () => {
    const day = path.join(dataDir, 'hotspots/date=2025-08-09/a.parquet');
    await writeBulkHotspots(day, '2025-08-09', 2000, 1);
    const s = await stat(day);
    const listed: DataFile = { path: day, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino, ctimeMs: s.ctimeMs, listedMs: s.ctimeMs + 5_000 };
    const listedHashes = new Map([[day, await hashFooter(listed)]]);
    // Other rows, renamed over it before the rendering reads it.
    const next = path.join(path.dirname(day), '_next.parquet');
    await writeBulkHotspots(next, '2025-08-09', 3000, 1);
    await rename(next, day);
    const store = made(await tempDir(), 64 * 1024 * 1024);
    store.renderLater(engine, 'geojson', spec, [listed], listedHashes);
    expect(await until(() => store.pending === 0)).toBe(true);
    expect([store.files, store.failures]).toEqual([0, 1]);
    expect(await store.read('geojson', [listed], listedHashes, { from: null, to: null, filters: [] })).toBeNull();
  });

  it('the disk budget: the least recently used rendering leaves (its file removed); one larger than the budget is never kept nor tried again', async () => {
    const probe = made(await tempDir(), 64 * 1024 * 1024);
    probe.renderLater(engine, 'geojson', spec, [files[0]!], hashes);
    expect(await until(() => probe.files === 1)).toBe(true);
    const one = probe.size;
    const dir = await tempDir();
    const store = made(dir, Math.floor(one * 1.5));
    store.renderLater(engine, 'geojson', spec, [files[0]!], hashes);
    expect(await until(() => store.files === 1)).toBe(true);
    store.renderLater(engine, 'geojson', spec, [files[1]!], hashes);
    expect(await until(async () => (await store.read('geojson', [files[1]!], hashes, { from: null, to: null, filters: [] })) !== null)).toBe(true);
    expect(store.files).toBe(1);
    expect(store.size).toBeLessThanOrEqual(Math.floor(one * 1.5));
    expect(await store.read('geojson', [files[0]!], hashes, { from: null, to: null, filters: [] })).toBeNull();
    expect(await until(async () => (await readdir(dir)).length === 1)).toBe(true);

    const small = made(await tempDir(), Math.floor(one / 2));
    small.renderLater(engine, 'geojson', spec, [files[0]!], hashes);
    expect(small.pending).toBe(1);
    expect(await until(() => small.pending === 0)).toBe(true);
    small.renderLater(engine, 'geojson', spec, [files[0]!], hashes);
    expect([small.files, small.size, small.pending, small.failures]).toEqual([0, 0, 0, 0]);
  });

  it('every byte a CSV rendering writes counts: a budget its lines fit but not the scratch copy they are cut from keeps nothing, leaves nothing', async () => {
    const probe = made(path.join(dataDir, 'tmp', 'renderings-probe'), 64 * 1024 * 1024);
    probe.renderLater(engine, 'csv', spec, [files[0]!], hashes);
    expect(await until(() => probe.files === 1)).toBe(true);
    // The lines as COPY writes them (the rendering holds them, then a record a row).
    const { rows, bytes } = await copied([files[0]!.path], us('2025-08-01T00:00:00Z'), us('2025-08-02T00:00:00Z'));
    const lines = bytes.length;
    expect(probe.size).toBeGreaterThan(lines);
    // The scratch copy holds each line after its key (16 digits of µs on that day) and a comma.
    const scratch = lines + rows * (String(us('2025-08-01T00:00:00Z')).length + 1);
    const dir = path.join(dataDir, 'tmp', 'renderings-scratch');
    const store = made(dir, Math.floor((lines + scratch) / 2));
    store.renderLater(engine, 'csv', spec, [files[0]!], hashes);
    expect(await until(() => store.pending === 0)).toBe(true);
    expect([store.files, store.size, store.failures]).toEqual([0, 0, 0]);
    expect(await store.read('csv', [files[0]!], hashes, { from: null, to: null, filters: [] })).toBeNull();
    expect(await readdir(dir)).toEqual([]);
    store.renderLater(engine, 'csv', spec, [files[0]!], hashes);
    expect(store.pending).toBe(0);
  });

  it('a file seen by the background checks waits while every connection is held; a file asked for meanwhile is rendered before it', async () => {
    const store = made(await tempDir(), 64 * 1024 * 1024);
    const leases = [await engine.acquire(), await engine.acquire()];
    const all = { from: null, to: null, filters: [] };
    try {
      store.renderLater(engine, 'geojson', spec, [files[0]!], hashes, 'seen');
      store.renderLater(engine, 'geojson', spec, [files[1]!], hashes);
      expect(await until(async () => (await store.read('geojson', [files[1]!], hashes, all)) !== null)).toBe(true);
      expect([store.files, store.pending, engine.busy]).toEqual([1, 1, 2]);
      expect(await store.read('geojson', [files[0]!], hashes, all)).toBeNull();
    } finally {
      for (const l of leases) l.release();
    }
    expect(await until(async () => (await store.read('geojson', [files[0]!], hashes, all)) !== null)).toBe(true);
    expect([store.files, store.pending, store.failures]).toEqual([2, 0, 0]);
  });

  it('a rendering whose file is gone is forgotten (its bytes too) and rendered again when next asked for', async () => {
    const dir = await tempDir();
    const store = made(dir, 64 * 1024 * 1024);
    const all = { from: null, to: null, filters: [] };
    store.renderLater(engine, 'geojson', spec, [files[0]!], hashes);
    expect(await until(() => store.files === 1)).toBe(true);
    const [name] = await readdir(dir);
    await rm(path.join(dir, name!));
    expect(await store.read('geojson', [files[0]!], hashes, all)).toBeNull();
    expect([store.files, store.size]).toEqual([0, 0]);
    store.renderLater(engine, 'geojson', spec, [files[0]!], hashes);
    expect(await until(() => store.files === 1)).toBe(true);
    expect((await store.read('geojson', [files[0]!], hashes, all))!.returned).toBeGreaterThan(1000);
    expect((await readdir(dir)).filter((n) => n !== name)).toHaveLength(1);
  });

  it('a file with more distinct values of a filter column than can be indexed: kept for unfiltered windows, filtered ones not answered from it', async () => {
    // 80,000 rows of one day, each with a country of its own, in the dataset's order.
    // Under the engine's TEMP_DIR: DuckDB writes nowhere else.
    const target = path.join(dataDir, 'tmp', 'many-values', 'b.parquet');
    await mkdir(path.dirname(target), { recursive: true });
    const lease = await engine.acquire();
    try {
      await lease.connection.run(`COPY (SELECT * REPLACE (id || '-' || r AS id, CAST(row_number() OVER () AS VARCHAR) AS country) FROM read_parquet('${files[0]!.path}'), range(4) t(r) ORDER BY acquiredAtUtc, id) TO '${target}' (FORMAT parquet)`);
    } finally {
      lease.release();
    }
    const s = await stat(target);
    const f: DataFile = { path: target, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
    const footer = new Map([[target, await hashFooter(f)]]);
    const store = made(await tempDir(), 256 * 1024 * 1024);
    store.renderLater(engine, 'geojson', spec, [f], footer);
    expect(await until(() => store.pending === 0)).toBe(true);
    expect([store.files, store.failures]).toEqual([1, 0]);
    expect((await store.read('geojson', [f], footer, { from: null, to: null, filters: [] }))!.returned).toBe(80_000);
    expect(await store.read('geojson', [f], footer, { from: null, to: null, filters: [{ kind: 'equals', column: 'country', value: '7' }] })).toBeNull();
  });
});
