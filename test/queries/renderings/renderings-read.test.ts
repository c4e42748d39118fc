import { readdir, readlink, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../queries/engine/engine.ts';
import { rangePieces, type ByteRange } from '../../../queries/renderings/rendered-window.ts';
import { RenderHandles } from '../../../queries/renderings/render-handles.ts';
import { renderedPieces, Renderings } from '../../../queries/renderings/renderings.ts';
import type { DataFile } from '../../../queries/files/data-file.ts';
import type { QuerySpec } from '../../../queries/sql/compile.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { hashFooter } from '../../../queries/files/footer.ts';
import { renderingDays, renderingsPerTest } from '../../helpers/renderings.ts';
import { until } from '../../helpers/until.ts';

const made = renderingsPerTest();

// Windows read from renderings a piece at a time: what a piece holds, renderings kept on disk while
// a window reads them, and a large window's files rendered only while DuckDB is quiet.
let engine: Engine;
let spec: QuerySpec;
const files: DataFile[] = [];
const hashes = new Map<string, string>();
const all = { from: null, to: null, filters: [] };

beforeAll(async () => {
  const days = await renderingDays(3);
  ({ engine, spec } = days);
  files.push(...days.files);
  for (const [file, hash] of days.hashes) hashes.set(file, hash);
}, 60_000);
afterAll(() => engine?.close());

const collect = async (pieces: AsyncIterable<Buffer>) => {
  const parts: Buffer[] = [];
  for await (const p of pieces) parts.push(p);
  return parts;
};

/** How many of this process's open files are each of `files` (Linux). */
async function openFds(files: readonly string[]): Promise<number[]> {
  const targets = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return files.map((f) => targets.filter((t) => t === f).length);
}

/** Renders `f` in `store` and waits until it is kept. */
async function rendered(store: Renderings, f: DataFile) {
  const before = store.files;
  store.renderLater(engine, 'geojson', spec, [f], hashes);
  expect(await until(() => store.pending === 0)).toBe(true);
  expect(store.files).toBe(before + 1);
}

describe('rendered windows read a piece at a time', () => {
  it('each piece holds at most its bound; together they are the ranges, in order, whatever lies between them', async () => {
    const file = path.join(await tempDir(), 'text');
    const text = Buffer.from(Array.from({ length: 10_000 }, (_, i) => i % 251));
    await writeFile(file, text);
    const handles = new RenderHandles(4);
    const read = (a: number, b: number) => handles.read(file, a, b);
    const ranges: ByteRange[] = [[0, 10], [15, 2_500], [2_600, 2_601], [2_999, 3_000], [5_000, 9_000], [9_999, 10_000]];
    const expected = Buffer.concat(ranges.map(([a, b]) => text.subarray(a, b)));
    for (const piece of [1, 7, 1_000, 4_096, Infinity]) {
      const parts = await collect(rangePieces(read, ranges, piece));
      expect(Buffer.concat(parts).equals(expected), String(piece)).toBe(true);
      expect(parts.every((p) => p.length > 0 && p.length <= piece), String(piece)).toBe(true);
    }
    expect(await collect(rangePieces(read, [], 10))).toEqual([]);
    await expect(collect(rangePieces(read, [[9_000, 10_001]], 4_096))).rejects.toThrow(/shorter/);
    const gone = path.join(path.dirname(file), 'gone');
    await expect(collect(rangePieces((a, b) => handles.read(gone, a, b), [[0, 1]], 10))).rejects.toThrow(/ENOENT/);
  });

  it('files stay open between reads, the least recently used closed past the most kept, one that left the disk closed once its reads are done', async () => {
    const dir = await tempDir();
    const names = ['a', 'b', 'c'].map((n) => path.join(dir, n));
    for (const n of names) await writeFile(n, Buffer.alloc(100, path.basename(n)));
    const handles = new RenderHandles(2);
    for (const n of names) expect((await handles.read(n, 0, 10)).equals(Buffer.alloc(10, path.basename(n)))).toBe(true);
    expect([handles.size, await openFds(names)]).toEqual([2, [0, 1, 1]]);
    await handles.read(names[1]!, 0, 1);
    // A read under way keeps its file open past a forget; the next read opens it again.
    const reading = handles.read(names[1]!, 0, 100);
    handles.forget(names[1]!);
    expect((await reading).length).toBe(100);
    expect(await until(async () => (await openFds(names))[1] === 0)).toBe(true);
    expect((await handles.read(names[1]!, 50, 60)).equals(Buffer.alloc(10, 'b'))).toBe(true);
    // A failed read closes its file.
    await expect(handles.read(names[2]!, 90, 110)).rejects.toThrow(/shorter/);
    expect(await until(async () => (await openFds(names))[2] === 0)).toBe(true);
    // Closed (the app stopping): every kept file closed; a read still made after it (a response still
    // sent) opens its file and closes it once done, rather than keeping it open for the collector.
    handles.close();
    expect(await until(async () => (await openFds(names)).every((n) => n === 0))).toBe(true);
    for (const n of names) expect((await handles.read(n, 0, 10)).equals(Buffer.alloc(10, path.basename(n)))).toBe(true);
    expect(await until(async () => (await openFds(names)).every((n) => n === 0))).toBe(true);
    expect(handles.size).toBe(0);
  });

  it('a rendering evicted while a window reads it stays on disk, counted, until the window is read; then it leaves', async () => {
    const sizes: number[] = [];
    const probe = made(await tempDir(), 1024 * 1024 * 1024);
    for (const f of files) {
      const before = probe.size;
      await rendered(probe, f);
      sizes.push(probe.size - before);
    }
    const dir = await tempDir();
    // Room for all three but one byte: the third evicts the first, least recently used.
    const store = made(dir, sizes[0]! + sizes[1]! + sizes[2]! - 1);
    await rendered(store, files[0]!);
    await rendered(store, files[1]!);
    const expected = (await store.read('geojson', files.slice(0, 2), hashes, all))!;
    const read = (await store.rangesSoon(engine, 'geojson', files.slice(0, 2), hashes, all, new AbortController().signal))!;
    expect([read.returned, read.bytes - read.skip]).toEqual([expected.returned, expected.bytes.length]);
    store.renderLater(engine, 'geojson', spec, [files[2]!], hashes);
    expect(await until(() => store.pending === 0)).toBe(true);
    expect(await store.read('geojson', [files[0]!], hashes, all)).toBeNull();
    expect([store.files, store.size, (await readdir(dir)).length]).toEqual([2, sizes[0]! + sizes[1]! + sizes[2]!, 3]);
    const parts = await collect(renderedPieces(read, 64 * 1024));
    expect(Buffer.concat(parts).equals(expected.bytes)).toBe(true);
    expect(Math.max(...parts.map((p) => p.length))).toBeLessThanOrEqual(64 * 1024);
    read.release();
    read.release();
    expect(store.size).toBe(sizes[1]! + sizes[2]!);
    expect(await until(async () => (await readdir(dir)).length === 2)).toBe(true);
  });

  it('a large window\'s files wait while any request uses DuckDB; a file the checks found is rendered meanwhile', async () => {
    const store = made(await tempDir(), 1024 * 1024 * 1024);
    const lease = await engine.acquire();
    try {
      store.renderLater(engine, 'geojson', spec, [files[0]!], hashes, 'quiet');
      store.renderLater(engine, 'geojson', spec, [files[1]!], hashes, 'seen');
      expect(await until(() => store.files === 1)).toBe(true);
      expect(await store.read('geojson', [files[1]!], hashes, all)).not.toBeNull();
      expect([store.pending, engine.busy]).toEqual([1, 1]);
      expect(await store.read('geojson', [files[0]!], hashes, all)).toBeNull();
    } finally {
      lease.release();
    }
    expect(await until(() => store.files === 2 && store.pending === 0)).toBe(true);
    expect((await store.read('geojson', [files[0]!], hashes, all))!.returned).toBe(20_000);
  });

  it('a large window\'s files never crowd out a file the checks found; one asked for by a small window is moved up and rendered at once', async () => {
    const store = made(await tempDir(), 1024 * 1024 * 1024);
    const lease = await engine.acquire();
    // Twenty files of large windows (other versions of the third file: never rendered while DuckDB is in use, then failing).
    const others = Array.from({ length: 20 }, (_, i) => ({ ...files[2]!, mtimeMs: files[2]!.mtimeMs + i + 1 }));
    const otherHashes = new Map([[files[2]!.path, hashes.get(files[2]!.path)!]]);
    try {
      store.renderLater(engine, 'geojson', spec, others, otherHashes, 'quiet');
      store.renderLater(engine, 'geojson', spec, [files[0]!], hashes, 'quiet');
      store.renderLater(engine, 'geojson', spec, [files[1]!], hashes, 'seen');
      expect(store.pending).toBe(22);
      expect(await until(() => store.files === 1)).toBe(true);
      expect(await store.read('geojson', [files[1]!], hashes, all)).not.toBeNull();
      store.renderLater(engine, 'geojson', spec, [files[0]!], hashes, 'asked');
      expect(await until(() => store.files === 2)).toBe(true);
      expect([store.pending, engine.busy]).toEqual([20, 1]);
    } finally {
      lease.release();
    }
    expect(await until(() => store.pending === 0)).toBe(true);
    expect(store.files).toBe(2);
  });

  it('a file read as stored but not in order key is never kept, nor tried again: its windows are answered the old way', async () => {
    const p = path.join(spec.dataDir, 'hotspots/date=2025-08-09/a.parquet');
    await writeBulkHotspots(p, '2025-08-09', 5_000, 1, 1, 'shuffled');
    const s = await stat(p);
    const f: DataFile = { path: p, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
    const footer = new Map([[p, await hashFooter(f)]]);
    const store = made(await tempDir(), 1024 * 1024 * 1024);
    for (const format of ['geojson', 'csv'] as const) store.renderLater(engine, format, spec, [f], footer);
    expect(await until(() => store.pending === 0)).toBe(true);
    expect([store.files, store.failures, store.size]).toEqual([0, 2, 0]);
    store.renderLater(engine, 'csv', spec, [f], footer);
    expect(store.pending).toBe(0);
  });
});
