import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../queries/engine/engine.ts';
import { Renderings } from '../../../queries/renderings/renderings.ts';
import type { DataFile } from '../../../queries/files/data-file.ts';
import type { QuerySpec } from '../../../queries/sql/compile.ts';
import { renderingDays, renderingsPerTest } from '../../helpers/renderings.ts';
import { until } from '../../helpers/until.ts';

/** The renderings stores a test makes, closed after it (and their files' handles). */
const renderings = renderingsPerTest();

// Files present at start (RENDER_AT_START): rendered only while no request uses DuckDB, and only
// into the room the budget has left, never by evicting a rendering a window asked for.
let engine: Engine;
let spec: QuerySpec;
let files: DataFile[];
let hashes: Map<string, string>;
let dataDir: string;
/** A renderings folder of its own under the engine's temp folder (DuckDB writes a CSV's scratch copy nowhere else). */
const place = () => path.join(dataDir, 'tmp', randomUUID());
const all = { from: null, to: null, filters: [] };
/** Bytes of each day's GeoJSON rendering. */
const sizes: number[] = [];

beforeAll(async () => {
  ({ engine, spec, files, hashes, dataDir } = await renderingDays(3));
  for (const f of files) {
    const store = renderings(place(), 1024 * 1024 * 1024);
    store.renderLater(engine, 'geojson', spec, [f], hashes);
    expect(await until(() => store.pending === 0)).toBe(true);
    sizes.push(store.size);
  }
}, 60_000);
afterAll(() => engine?.close());

const rendered = async (store: Renderings, f: DataFile) => (await store.read('geojson', [f], hashes, all)) !== null;

describe('files present at start rendered into the room left', () => {
  it('wait while any request uses DuckDB, where a file the checks found later does not', async () => {
    const store = renderings(place(), 1024 * 1024 * 1024);
    const lease = await engine.acquire();
    try {
      store.renderLater(engine, 'geojson', spec, [files[0]!], hashes, 'stock');
      store.renderLater(engine, 'geojson', spec, [files[1]!], hashes, 'seen');
      expect(await until(() => store.files === 1)).toBe(true);
      expect([await rendered(store, files[1]!), await rendered(store, files[0]!)]).toEqual([true, false]);
      expect([store.pending, engine.busy]).toEqual([1, 1]);
    } finally {
      lease.release();
    }
    expect(await until(() => store.files === 2 && store.pending === 0)).toBe(true);
    expect(await rendered(store, files[0]!)).toBe(true);
  });

  it('never evict: the first that does not fit ends them, not counted a failure, and a window asked later still evicts as before', async () => {
    // Room for the first day's rendering and most of another day's GeoJSON.
    const store = renderings(place(), sizes[0]! + 0.9 * Math.min(...sizes.slice(1)));
    store.renderLater(engine, 'geojson', spec, [files[0]!], hashes, 'asked');
    expect(await until(() => store.pending === 0)).toBe(true);
    expect(store.files).toBe(1);
    // All queued before any starts. A day's CSV would fit (its copy and lines together about two
    // thirds of its GeoJSON), but comes after the GeoJSON that does not.
    const lease = await engine.acquire();
    try {
      store.renderLater(engine, 'csv', spec, [files[1]!], hashes, 'stock');
      store.renderLater(engine, 'geojson', spec, [files[1]!, files[2]!], hashes, 'stock');
    } finally {
      lease.release();
    }
    expect(await until(() => store.pending === 0)).toBe(true);
    expect([store.files, store.failures, store.size]).toEqual([1, 0, sizes[0]]);
    expect(await rendered(store, files[0]!)).toBe(true);
    expect(await store.read('csv', [files[1]!], hashes, all)).toBeNull();
    // No more files present at start are queued once one found no room.
    store.renderLater(engine, 'csv', spec, [files[1]!], hashes, 'stock');
    expect(store.pending).toBe(0);
    // The one that found no room is not refused for good: asked for, it is rendered, the older one out to make room.
    store.renderLater(engine, 'geojson', spec, [files[2]!], hashes, 'asked');
    expect(await until(() => store.pending === 0)).toBe(true);
    expect([await rendered(store, files[2]!), await rendered(store, files[0]!), store.files]).toEqual([true, false, 1]);
  });

  it('fill the budget while they fit, newest first; evicted oldest first, before anything asked for', async () => {
    const store = renderings(place(), sizes[0]! + sizes[1]! + sizes[2]!);
    const lease = await engine.acquire();
    try {
      store.renderLater(engine, 'geojson', spec, files, hashes, 'stock');
    } finally {
      lease.release();
    }
    expect(await until(() => store.pending === 0)).toBe(true);
    // None read yet (a read makes a rendering the most recently used).
    expect([store.files, store.failures, store.size]).toEqual([3, 0, sizes[0]! + sizes[1]! + sizes[2]!]);
    // A day's CSV asked for needs the room of one GeoJSON rendering: the oldest day's goes.
    store.renderLater(engine, 'csv', spec, [files[1]!], hashes, 'asked');
    expect(await until(() => store.pending === 0)).toBe(true);
    expect([await rendered(store, files[0]!), await rendered(store, files[1]!), await rendered(store, files[2]!)]).toEqual([false, true, true]);
  });
});
