import { rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../queries/engine/engine.ts';
import { readWhole, Renderings } from '../../../queries/engine/renderings.ts';
import type { DataFile } from '../../../queries/files/data-file.ts';
import type { QuerySpec } from '../../../queries/sql/compile.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { renderingDays } from '../../helpers/renderings.ts';
import { until } from '../../helpers/until.ts';

// A window whose file is about to be rendered waits for the rendering instead of asking DuckDB.
let engine: Engine;
let spec: QuerySpec;
let dataDir: string;
const files: DataFile[] = [];
const hashes = new Map<string, string>();
const all = { from: null, to: null, filters: [] };
/** The window's rows as the server reads a small one: where they lie (waiting for renderings soon), then read whole. */
const readSoon = async (store: Renderings, ...args: Parameters<Renderings['rangesSoon']>) => readWhole(await store.rangesSoon(...args));

beforeAll(async () => {
  const days = await renderingDays(2);
  ({ engine, spec } = days);
  dataDir = days.dataDir;
  files.push(...days.files);
  for (const [file, hash] of days.hashes) hashes.set(file, hash);
}, 60_000);
afterAll(() => engine?.close());

describe('renderings: a window waits for its file\'s rendering when it is next', () => {
  it('a queued file (even one only seen, while every connection is held) is rendered and answers the window; a file not queued does not wait', async () => {
    const store = new Renderings(await tempDir(), 64 * 1024 * 1024);
    const leases = [await engine.acquire(), await engine.acquire()];
    try {
      expect(await readSoon(store, engine, 'geojson', [files[1]!], hashes, all, new AbortController().signal)).toBeNull();
      expect([store.pending, store.misses]).toEqual([0, 1]);
      store.renderLater(engine, 'geojson', spec, [files[0]!], hashes, 'seen');
      const read = await readSoon(store, engine, 'geojson', [files[0]!], hashes, all, new AbortController().signal);
      expect(read?.returned).toBe(20_000);
      expect([store.files, store.pending, store.hits, store.misses, engine.busy]).toEqual([1, 0, 1, 1, 2]);
      expect((await store.read('geojson', [files[0]!], hashes, all))!.bytes.equals(read!.bytes)).toBe(true);
    } finally {
      for (const l of leases) l.release();
    }
  });

  it('a window whose client has gone stops waiting and is not answered from the rendering', async () => {
    // Under the engine's TEMP_DIR: DuckDB writes a CSV rendering's scratch copy nowhere else.
    const store = new Renderings(path.join(dataDir, 'tmp', 'renderings-soon'), 64 * 1024 * 1024);
    const lease = await engine.acquire();
    try {
      store.renderLater(engine, 'csv', spec, [files[1]!], hashes);
      const gone = new AbortController();
      gone.abort();
      expect(await readSoon(store, engine, 'csv', [files[1]!], hashes, all, gone.signal)).toBeNull();
      expect([store.hits, store.misses]).toEqual([0, 1]);
    } finally {
      lease.release();
    }
    expect(await until(() => store.files === 1)).toBe(true);
  });

  it('while no request uses DuckDB, a window is answered the old way at once, its file\'s rendering under way or not', async () => {
    const store = new Renderings(await tempDir(), 64 * 1024 * 1024);
    store.renderLater(engine, 'geojson', spec, [files[1]!], hashes);
    expect([engine.busy, engine.queued, store.pending]).toEqual([0, 0, 1]);
    expect(await readSoon(store, engine, 'geojson', [files[1]!], hashes, all, new AbortController().signal)).toBeNull();
    expect([store.hits, store.misses, store.files]).toEqual([0, 1, 0]);
    expect(await until(() => store.files === 1)).toBe(true);
  });

  it('a file further down the queue than the renderings expected within three seconds is answered the old way at once', async () => {
    const store = new Renderings(await tempDir(), 64 * 1024 * 1024);
    // Thirteen identities of one file, queued while every connection is held: none can start, and
    // before any rendering is timed each is expected to take 0.25 s.
    const queued = Array.from({ length: 13 }, (_, i) => ({ ...files[0]!, mtimeMs: files[0]!.mtimeMs + i + 1 }));
    const leases = [await engine.acquire(), await engine.acquire()];
    try {
      store.renderLater(engine, 'geojson', spec, queued, hashes, 'seen');
      expect(store.pending).toBe(13);
      expect(await readSoon(store, engine, 'geojson', [queued[12]!], hashes, all, new AbortController().signal)).toBeNull();
      expect([store.pending, store.misses]).toEqual([13, 1]);
    } finally {
      for (const l of leases) l.release();
    }
    expect(await until(() => store.pending === 0)).toBe(true);
  });

  it('renderings that failed do not make the next ones look sooner: the pace is that of renderings kept', async () => {
    // A plain file where the directory should be: each rendering fails at once, as on a full disk.
    const dir = path.join(await tempDir(), 'renderings');
    await writeFile(dir, 'not a directory');
    const store = new Renderings(dir, 64 * 1024 * 1024);
    for (let i = 0; i < 5; i++) {
      store.renderLater(engine, 'geojson', spec, [files[0]!], hashes);
      expect(await until(() => store.pending === 0)).toBe(true);
    }
    expect([store.failures, store.files]).toEqual([5, 0]);
    await rm(dir);
    // As before any rendering is timed: the thirteenth of thirteen queued is not expected within three seconds.
    const queued = Array.from({ length: 13 }, (_, i) => ({ ...files[0]!, mtimeMs: files[0]!.mtimeMs + i + 1 }));
    const leases = [await engine.acquire(), await engine.acquire()];
    try {
      store.renderLater(engine, 'geojson', spec, queued, hashes, 'seen');
      expect(await readSoon(store, engine, 'geojson', [queued[12]!], hashes, all, new AbortController().signal)).toBeNull();
      expect([store.pending, store.misses]).toEqual([13, 1]);
    } finally {
      for (const l of leases) l.release();
    }
    expect(await until(() => store.pending === 0)).toBe(true);
  });

  it('closed, the renderings let every waiting window go at once (answered the old way) and queue nothing more', async () => {
    const store = new Renderings(await tempDir(), 64 * 1024 * 1024);
    const leases = [await engine.acquire(), await engine.acquire()];
    try {
      store.renderLater(engine, 'geojson', spec, files, hashes);
      const waiting = readSoon(store, engine, 'geojson', [files[1]!], hashes, all, new AbortController().signal);
      expect(await until(() => store.waiting === 1)).toBe(true);
      // The second file is still queued behind the first one's rendering.
      expect(store.pending).toBe(2);
      store.close();
      expect(await waiting).toBeNull();
      expect([store.waiting, store.pending, store.hits, store.misses]).toEqual([0, 0, 0, 1]);
      store.renderLater(engine, 'geojson', spec, [files[1]!], hashes);
      expect(store.pending).toBe(0);
      expect(await readSoon(store, engine, 'geojson', [files[1]!], hashes, all, new AbortController().signal)).toBeNull();
      expect(await store.read('geojson', [files[1]!], hashes, all)).toBeNull();
    } finally {
      for (const l of leases) l.release();
    }
  });

  it('once the engine has closed, files still queued are let go without being tried, and none is queued again', async () => {
    const own = await Engine.create({ dataDir, tempDir: path.join(dataDir, 'tmp-closed'), threads: 1, connections: 1, memoryLimit: '256MB', maxQueued: 10 });
    const lease = await own.acquire();
    // Not made yet: a rendering tried would make it first.
    const dir = path.join(await tempDir(), 'renderings');
    const store = new Renderings(dir, 64 * 1024 * 1024);
    // Seen files while the only connection is held: queued, none started.
    store.renderLater(own, 'geojson', spec, files, hashes, 'seen');
    expect(store.pending).toBe(2);
    own.close();
    lease.release();
    expect(await until(() => store.pending === 0)).toBe(true);
    store.renderLater(own, 'csv', spec, files, hashes);
    expect(store.pending).toBe(0);
    expect(await readSoon(store, own, 'csv', files, hashes, all, new AbortController().signal)).toBeNull();
    expect([store.pending, store.files, store.failures, store.waiting]).toEqual([0, 0, 0, 0]);
    expect(await stat(dir).catch(() => null)).toBeNull();
  });
});
