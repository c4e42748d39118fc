import { rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { Engine } from '../../../queries/engine/engine.ts';
import type { DataFile } from '../../../queries/files/data-file.ts';
import { hashFooter } from '../../../queries/files/footer.ts';
import type { QuerySpec } from '../../../queries/sql/compile.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { writeBulkHotspotDays } from '../../helpers/sample-data.ts';
import { until } from '../../helpers/until.ts';
import { renderingsPerTest } from '../../helpers/renderings.ts';

/** The renderings stores a test makes, closed after it (and their files' handles). */
const renderings = renderingsPerTest();

// A rendering that failed for a cause of the moment (here its directory could not be made) is tried again.
let engine: Engine;
let spec: QuerySpec;
let file: DataFile;
let hashes: Map<string, string>;

beforeAll(async () => {
  const dataDir = await writeBulkHotspotDays(1);
  engine = await Engine.create({ dataDir, tempDir: path.join(dataDir, 'tmp'), threads: 1, connections: 2, memoryLimit: '256MB', maxQueued: 10 });
  spec = { descriptor: hotspots, dataDir, filters: [], params: {}, stationFiles: null };
  const p = path.join(dataDir, 'hotspots/date=2025-08-01/a.parquet');
  const s = await stat(p);
  file = { path: p, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
  hashes = new Map([[p, await hashFooter(file)]]);
}, 60_000);
afterAll(() => engine?.close());

describe('renderings: a failure of the moment is not held against the file', () => {
  it('a cache directory that cannot be made fails the rendering; once it can, the file is rendered when next asked for', async () => {
    // A plain file where the directory should be: making it fails as a full or read-only disk would.
    const dir = path.join(await tempDir(), 'renderings');
    await writeFile(dir, 'not a directory');
    const store = renderings(dir, 64 * 1024 * 1024);
    store.renderLater(engine, 'geojson', spec, [file], hashes);
    expect(await until(() => store.pending === 0)).toBe(true);
    expect([store.files, store.failures]).toEqual([0, 1]);
    await rm(dir);
    store.renderLater(engine, 'geojson', spec, [file], hashes);
    expect(await until(() => store.pending === 0)).toBe(true);
    expect([store.files, store.failures]).toEqual([1, 1]);
    expect((await store.read('geojson', [file], hashes, { from: null, to: null, filters: [] }))!.returned).toBe(20_000);
  });
});
