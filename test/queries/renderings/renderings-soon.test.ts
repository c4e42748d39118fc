import { rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../queries/engine/engine.ts';
import { readWhole, Renderings } from '../../../queries/renderings/renderings.ts';
import type { DataFile } from '../../../queries/files/data-file.ts';
import type { QuerySpec } from '../../../queries/sql/compile.ts';
import { hashFooter } from '../../../queries/files/footer.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { renderingDays, renderingsPerTest } from '../../helpers/renderings.ts';
import { until } from '../../helpers/until.ts';

/** The renderings stores a test makes, closed after it (and their files' handles). */
const renderings = renderingsPerTest();

// A window whose file is about to be rendered waits for the rendering instead of asking DuckDB, when
// the rendering is expected done sooner than the requests queued for DuckDB would let it be answered.
let engine: Engine;
let spec: QuerySpec;
let dataDir: string;
const files: DataFile[] = [];
const hashes = new Map<string, string>();
const all = { from: null, to: null, filters: [] };
/** The window's rows as the server reads a small one: where they lie (waiting for renderings soon), then read whole. */
const readSoon = async (store: Renderings, ...args: Parameters<Renderings['rangesSoon']>) => readWhole(await store.rangesSoon(...args));

/** An engine of the same settings that has timed no request's turn on a connection yet. */
const freshEngine = () => Engine.create({ dataDir, tempDir: path.join(dataDir, 'tmp'), threads: 1, connections: 2, memoryLimit: '256MB', maxQueued: 10 });

/** A request's turn on a connection of `e` of about `ms` or more (a timer fires a millisecond early at most): the old way then looks that slow. */
async function slowTurn(e: Engine, ms: number): Promise<void> {
  const lease = await e.acquire();
  await new Promise((r) => setTimeout(r, ms));
  lease.release();
}

/**
 * A fresh engine after a request's turn of `turnMs`, its two connections held and `waiting` requests
 * queued behind them: the old way then looks (waiting + 2) / 2 turns slow. `free` lets them all go.
 */
async function busyEngine(turnMs: number, waiting: number): Promise<{ engine: Engine; free: () => Promise<void> }> {
  const e = await Engine.create({ dataDir, tempDir: path.join(dataDir, 'tmp'), threads: 1, connections: 2, memoryLimit: '256MB', maxQueued: 100 });
  await slowTurn(e, turnMs);
  const leases = [await e.acquire(), await e.acquire()];
  const queued = Array.from({ length: waiting }, () => e.acquire());
  return {
    engine: e,
    free: async () => {
      for (const l of leases) l.release();
      for (const q of queued) (await q).release();
    },
  };
}

beforeAll(async () => {
  const days = await renderingDays(2);
  ({ engine, spec } = days);
  dataDir = days.dataDir;
  files.push(...days.files);
  for (const [file, hash] of days.hashes) hashes.set(file, hash);
}, 60_000);
afterAll(() => engine?.close());

describe('renderings: a window waits for its file\'s rendering when it is expected sooner than the old way', () => {
  it('a queued file (even one only seen, while every connection is held) is rendered and answers the window; a file not queued does not wait', async () => {
    const store = renderings(await tempDir(), 64 * 1024 * 1024);
    const engine = await freshEngine();
    // The old way takes a third of a second a turn; a rendering is expected to take 0.25 s before any is timed.
    await slowTurn(engine, 340);
    const leases = [await engine.acquire(), await engine.acquire()];
    try {
      expect(engine.answerMs()!).toBeGreaterThan(250);
      expect(await readSoon(store, engine, 'geojson', [files[1]!], hashes, all, new AbortController().signal)).toBeNull();
      expect([store.pending, store.misses]).toEqual([0, 1]);
      store.renderLater(engine, 'geojson', spec, [files[0]!], hashes, 'seen');
      const read = await readSoon(store, engine, 'geojson', [files[0]!], hashes, all, new AbortController().signal);
      expect(read?.returned).toBe(20_000);
      expect([store.files, store.pending, store.hits, store.misses, engine.busy]).toEqual([1, 0, 1, 1, 2]);
      expect((await store.read('geojson', [files[0]!], hashes, all))!.bytes.equals(read!.bytes)).toBe(true);
    } finally {
      for (const l of leases) l.release();
      engine.close();
    }
  });

  it('the old way\'s expected time: none with a connection idle; with every connection held, the requests queued ahead and a turn, at the length of the recent turns', async () => {
    const engine = await freshEngine();
    try {
      expect(engine.answerMs()).toBe(0);
      const [first, second] = [await engine.acquire(), await engine.acquire()];
      // Nothing timed yet: nothing says the old way is slow.
      expect(engine.answerMs()).toBeNull();
      await new Promise((r) => setTimeout(r, 100));
      first.release();
      expect(engine.answerMs()).toBe(0);
      const third = await engine.acquire();
      // Both connections held and nobody queued: (0 + 2) / 2 turns, a turn as long as the only one timed (about 100 ms: a timer may fire a millisecond early).
      const turn = engine.answerMs()!;
      expect(turn).toBeGreaterThanOrEqual(95);
      const queued = engine.acquire();
      expect(engine.answerMs()).toBeCloseTo(turn * 1.5, 6);
      second.release();
      const fourth = await queued;
      third.release();
      fourth.release();
      expect(engine.answerMs()).toBe(0);
    } finally {
      engine.close();
    }
  });

  it('a window whose file\'s rendering is expected later than the old way would answer it (requests served quickly) is answered the old way at once', async () => {
    const store = renderings(await tempDir(), 64 * 1024 * 1024);
    const engine = await freshEngine();
    // Turns given back at once: the old way's is well under a millisecond, a rendering is expected
    // to take 0.25 s before any is timed.
    for (let i = 0; i < 50; i++) (await engine.acquire()).release();
    const leases = [await engine.acquire(), await engine.acquire()];
    try {
      expect(engine.answerMs()!).toBeGreaterThan(0);
      expect(engine.answerMs()!).toBeLessThan(50);
      store.renderLater(engine, 'geojson', spec, [files[0]!], hashes, 'seen');
      expect(await readSoon(store, engine, 'geojson', [files[0]!], hashes, all, new AbortController().signal)).toBeNull();
      expect([store.pending, store.waiting, store.hits, store.misses]).toEqual([1, 0, 0, 1]);
    } finally {
      for (const l of leases) l.release();
    }
    // Only seen, it is rendered once the engine is idle.
    expect(await until(() => store.files === 1)).toBe(true);
    engine.close();
  });

  it('a window whose client has gone stops waiting and is not answered from the rendering', async () => {
    // Under the engine's TEMP_DIR: DuckDB writes a CSV rendering's scratch copy nowhere else.
    const store = renderings(path.join(dataDir, 'tmp', 'renderings-soon'), 64 * 1024 * 1024);
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
    const store = renderings(await tempDir(), 64 * 1024 * 1024);
    store.renderLater(engine, 'geojson', spec, [files[1]!], hashes);
    expect([engine.busy, engine.queued, store.pending]).toEqual([0, 0, 1]);
    expect(await readSoon(store, engine, 'geojson', [files[1]!], hashes, all, new AbortController().signal)).toBeNull();
    expect([store.hits, store.misses, store.files]).toEqual([0, 1, 0]);
    expect(await until(() => store.files === 1)).toBe(true);
  });

  it('a window never waits for a file behind another in the queue, nor for two files, however slow the old way', async () => {
    const store = renderings(await tempDir(), 64 * 1024 * 1024);
    // Two identities of one file, queued while every connection is held: neither starts (only seen).
    const queued = [1, 2].map((i) => ({ ...files[0]!, mtimeMs: files[0]!.mtimeMs + i }));
    const { engine, free } = await busyEngine(400, 2);
    try {
      expect(engine.answerMs()!).toBeGreaterThan(750);
      store.renderLater(engine, 'geojson', spec, queued, hashes, 'seen');
      expect(store.pending).toBe(2);
      expect(await readSoon(store, engine, 'geojson', [queued[1]!], hashes, all, new AbortController().signal)).toBeNull();
      expect(await readSoon(store, engine, 'geojson', queued, hashes, all, new AbortController().signal)).toBeNull();
      expect([store.pending, store.waiting, store.misses]).toEqual([2, 0, 2]);
    } finally {
      await free();
    }
    expect(await until(() => store.pending === 0)).toBe(true);
    engine.close();
  });

  it('renderings that failed do not make the next ones look sooner: the pace is that of renderings kept', async () => {
    // A plain file where the directory should be: each rendering fails at once, as on a full disk.
    const dir = path.join(await tempDir(), 'renderings');
    await writeFile(dir, 'not a directory');
    const store = renderings(dir, 64 * 1024 * 1024);
    // Ten that fail at once would bring the pace to a few milliseconds if they counted.
    for (let i = 0; i < 10; i++) {
      store.renderLater(engine, 'geojson', spec, [files[0]!], hashes);
      expect(await until(() => store.pending === 0)).toBe(true);
    }
    expect([store.failures, store.files]).toEqual([10, 0]);
    await rm(dir);
    // As before any rendering is timed (0.25 s), later than the old way's twenty milliseconds or so.
    const { engine: busy, free } = await busyEngine(20, 0);
    try {
      expect(busy.answerMs()!).toBeLessThan(250);
      store.renderLater(busy, 'geojson', spec, [files[0]!], hashes, 'seen');
      expect(await readSoon(store, busy, 'geojson', [files[0]!], hashes, all, new AbortController().signal)).toBeNull();
      expect([store.pending, store.misses]).toEqual([1, 1]);
    } finally {
      await free();
    }
    expect(await until(() => store.pending === 0)).toBe(true);
    busy.close();
  });

  it('closed, the renderings let every waiting window go at once (answered the old way) and queue nothing more', async () => {
    const store = renderings(await tempDir(), 256 * 1024 * 1024);
    // A file of 600,000 rows: its rendering takes seconds, so the window is still waiting when the renderings close.
    const p = path.join(dataDir, 'hotspots/date=2025-08-20/a.parquet');
    await writeBulkHotspots(p, '2025-08-20', 600_000, 10);
    const s = await stat(p);
    const big: DataFile = { path: p, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
    const bigHashes = new Map([[p, await hashFooter(big)]]);
    const engine = await freshEngine();
    // Its rendering is expected in 0.25 s (none timed yet): sooner than the old way.
    await slowTurn(engine, 400);
    const leases = [await engine.acquire(), await engine.acquire()];
    try {
      store.renderLater(engine, 'geojson', spec, [big, files[1]!], new Map([...bigHashes, ...hashes]));
      const waiting = readSoon(store, engine, 'geojson', [big], bigHashes, all, new AbortController().signal);
      expect(await until(() => store.waiting === 1)).toBe(true);
      // Still under way, the second file queued behind it.
      expect([store.pending, store.files]).toEqual([2, 0]);
      store.close();
      expect(await waiting).toBeNull();
      expect([store.waiting, store.pending, store.hits, store.misses]).toEqual([0, 0, 0, 1]);
      store.renderLater(engine, 'geojson', spec, [files[1]!], hashes);
      expect(store.pending).toBe(0);
      expect(await readSoon(store, engine, 'geojson', [files[1]!], hashes, all, new AbortController().signal)).toBeNull();
      expect(await store.read('geojson', [files[1]!], hashes, all)).toBeNull();
    } finally {
      for (const l of leases) l.release();
      // Interrupts the rendering still under way.
      engine.close();
      await rm(path.dirname(p), { recursive: true });
    }
  });

  it('once the engine has closed, files still queued are let go without being tried, and none is queued again', async () => {
    const own = await Engine.create({ dataDir, tempDir: path.join(dataDir, 'tmp-closed'), threads: 1, connections: 1, memoryLimit: '256MB', maxQueued: 10 });
    const lease = await own.acquire();
    // Not made yet: a rendering tried would make it first.
    const dir = path.join(await tempDir(), 'renderings');
    const store = renderings(dir, 64 * 1024 * 1024);
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
