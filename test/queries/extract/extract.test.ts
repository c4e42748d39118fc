import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { Engine } from '../../../queries/engine/engine.ts';
import type { ExtractContext } from '../../../queries/renderings/rendered.ts';
import { prepareExtract } from '../../../queries/extract/extract.ts';
import { FileChecker } from '../../../queries/files/check.ts';
import { parseInstant } from '../../../queries/instant.ts';
import { TempBudgetFullError } from '../../../queries/errors.ts';
import { TempBudget } from '../../../queries/engine/temp-budget.ts';
import { hashFooter } from '../../../queries/files/footer.ts';
import { until } from '../../helpers/until.ts';
import { renderingsPerTest } from '../../helpers/renderings.ts';
import { CHAIN } from '../../helpers/sample-data.ts';
import { tempDir, writeChain } from '../../helpers/fixtures.ts';
import { writeBulkHotspots } from '../../helpers/parquet.ts';

/** The renderings stores a test makes, closed after it (and their files' handles). */
const renderingsStore = renderingsPerTest();

let dataDir: string;
let engine: Engine;
beforeAll(async () => {
  dataDir = await tempDir();
  await writeChain(dataDir, 'hotspots', CHAIN);
  for (const day of ['01', '02', '03']) await writeBulkHotspots(path.join(dataDir, `hotspots/date=2025-07-${day}/a.parquet`), `2025-07-${day}`, 1000, 2, 30);
  engine = await Engine.create({ dataDir, tempDir: path.join(dataDir, '.tmp'), threads: 1, connections: 3, memoryLimit: '1GB', maxQueued: 8 });
});
afterAll(() => engine.close());

const context = (groupRows: number): ExtractContext => ({
  engine,
  checker: new FileChecker(dataDir),
  dataDir,
  tempDir: path.join(dataDir, '.tmp'),
  rowLimit: 1_000_000,
  groupRows,
  parquetRowGroupRows: 65_536,
  inMemoryRows: 0,
  inMemoryMaxBytes: 4 * 1024 * 1024,
  connectionsPerExtract: 2,
  nowMs: Date.parse('2025-08-03T07:00:00Z'),
  signal: new AbortController().signal,
  rowsCache: null,
  tempBudget: new TempBudget(1 << 30, 60),
  aheadBytes: 64 << 20,
});
const window = { from: parseInstant('2025-07-01')!, to: parseInstant('2025-07-04')! };
const request = { descriptor: hotspots, window, format: 'csv' as const, filters: [], folderValue: undefined, params: {} };

async function body(chunks: AsyncGenerator<string | Buffer>): Promise<string> {
  let text = '';
  for await (const c of chunks) text += c.toString();
  return text;
}

describe('prepareExtract', () => {
  it('writes a window no larger than one group before answering: the connection is free before the first byte', async () => {
    const extract = (await prepareExtract(context(5000), request))!;
    expect(extract.returned).toBe(3000);
    expect(engine.busy).toBe(0);
    const text = await body(extract.chunks());
    expect(text.trim().split('\n')).toHaveLength(3000);
    extract.dispose();
  });

  it('streams a larger window group by group, holding no connection between the preflight and the first group', async () => {
    const extract = (await prepareExtract(context(1000), request))!;
    expect(extract.returned).toBe(3000);
    expect(engine.busy).toBe(0);
    const text = await body(extract.chunks());
    expect(engine.busy).toBe(0);
    expect(text).toBe(await body((await prepareExtract(context(5000), request))!.chunks()));
  });

  it('reserves its write-ahead from the temp budget until the response ends, and refuses when the budget is spent', async () => {
    const tempBudget = new TempBudget(100 << 20, 60);
    const ctx = { ...context(1000), tempBudget, aheadBytes: 60 << 20 };
    const first = (await prepareExtract(ctx, request))!;
    expect(tempBudget.usedBytes).toBe(60 << 20);
    await expect(prepareExtract(ctx, request)).rejects.toBeInstanceOf(TempBudgetFullError);
    await body(first.chunks());
    expect(tempBudget.usedBytes).toBe(0);
    (await prepareExtract(ctx, request))!.dispose();
    expect(tempBudget.usedBytes).toBe(0);
  });

  it('removes the written file when the response never starts', async () => {
    const extract = (await prepareExtract(context(5000), request))!;
    expect((await readdir(path.join(dataDir, '.tmp'))).length).toBe(1);
    extract.dispose();
    await new Promise((r) => setTimeout(r, 50));
    expect(await readdir(path.join(dataDir, '.tmp'))).toEqual([]);
  });
});

/** A data folder of its own: one day of `rows` hotspots, an engine of three connections. */
async function oneDay(rows: number, stepSeconds: number) {
  const dir = await tempDir();
  const temp = path.join(dir, '.tmp');
  await writeChain(dir, 'hotspots', CHAIN);
  await writeBulkHotspots(path.join(dir, 'hotspots/date=2025-07-01/a.parquet'), '2025-07-01', rows, 3, stepSeconds);
  const own = await Engine.create({ dataDir: dir, tempDir: temp, threads: 1, connections: 3, memoryLimit: '1GB', maxQueued: 8 });
  const ctx = (over: Partial<ExtractContext>): ExtractContext => ({ ...context(100_000), engine: own, checker: new FileChecker(dir), dataDir: dir, tempDir: temp, ...over });
  const tempFiles = async () => (await readdir(temp)).map((f) => path.join(temp, f));
  return { own, ctx, tempFiles };
}

describe('prepareExtract on a window worth splitting', () => {
  it('writes consecutive time slices side by side and gives the same bytes as one statement', async () => {
    const { own, ctx: withConnections, tempFiles } = await oneDay(24_000, 7);
    try {
      const ctx = (connectionsPerExtract: number) => withConnections({ connectionsPerExtract });
      const day = { ...request, window: { from: parseInstant('2025-07-01')!, to: parseInstant('2025-07-02')! } };
      for (const format of ['csv', 'geojson'] as const) {
        const one = (await prepareExtract(ctx(1), { ...day, format }))!;
        const three = (await prepareExtract(ctx(3), { ...day, format }))!;
        expect(own.busy).toBe(0);
        // One file for the single statement, three for the slices.
        expect(await tempFiles()).toHaveLength(4);
        expect([one.returned, three.returned]).toEqual([24_000, 24_000]);
        const [a, b] = [await body(one.chunks()), await body(three.chunks())];
        expect(b).toBe(a);
        expect(a.startsWith(format === 'csv' ? '2025-07-01-00000000,' : '{"type":"Feature"')).toBe(true);
      }
      expect(await tempFiles()).toEqual([]);

      // A month's window over one day of data is sliced where the data can be, not over the month.
      const month = { ...request, window: { from: parseInstant('2025-07-01')!, to: parseInstant('2025-08-01')! } };
      const wide = (await prepareExtract(ctx(3), month))!;
      const sizes = await Promise.all((await tempFiles()).map(async (f) => (await stat(f)).size));
      expect(sizes).toHaveLength(3);
      expect(sizes.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
      expect(await body(wide.chunks())).toBe(await body((await prepareExtract(ctx(1), month))!.chunks()));
    } finally {
      own.close();
    }
  });
});

describe('prepareExtract aborted while the whole window is written', () => {
  it('rejects, returns every connection and leaves no file, wherever the abort lands', async () => {
    const { own, ctx: withOptions, tempFiles } = await oneDay(60_000, 1);
    try {
      const day = { ...request, format: 'geojson' as const, window: { from: parseInstant('2025-07-01')!, to: parseInstant('2025-07-02')! } };
      for (const afterMs of [0, 2, 5, 10]) {
        const abort = new AbortController();
        const pending = prepareExtract(withOptions({ connectionsPerExtract: 3, signal: abort.signal }), day);
        setTimeout(() => abort.abort(new Error('client gone')), afterMs);
        await expect(pending).rejects.toThrow();
        expect(own.busy).toBe(0);
        expect(await tempFiles()).toEqual([]);
      }
    } finally {
      own.close();
    }
  });
});

describe('prepareExtract on a cold window', () => {
  it('checks its files on idle connections too, returns them all, and keeps every verdict', async () => {
    const checker = new FileChecker(dataDir);
    const extract = (await prepareExtract({ ...context(5000), checker, connectionsPerExtract: 3 }, request))!;
    expect(engine.busy).toBe(0);
    expect(extract.returned).toBe(3000);
    for (const day of ['01', '02', '03']) {
      const file = path.join(dataDir, `hotspots/date=2025-07-${day}/a.parquet`);
      const { size, mtimeMs, ino, ctimeMs } = await stat(file);
      expect(checker.cached(hotspots, { path: file, size, mtimeMs, ino, ctimeMs })).toMatchObject({ ok: true, rows: 1000 });
    }
    extract.dispose();
  });
});

describe('prepareExtract and renderings', () => {
  it('a request that took a connection to check its files never waits for its file\'s rendering, however soon it is', async () => {
    const own = await Engine.create({ dataDir, tempDir: path.join(dataDir, '.tmp'), threads: 1, connections: 2, memoryLimit: '1GB', maxQueued: 8 });
    // A turn of a third of a second: the old way looks slower than a rendering expected in 0.25 s.
    const slow = await own.acquire();
    await new Promise((r) => setTimeout(r, 340));
    slow.release();
    const renderings = renderingsStore(await tempDir(), 64 * 1024 * 1024);
    const file = path.join(dataDir, 'hotspots/date=2025-07-01/a.parquet');
    const { size, mtimeMs, ino, ctimeMs } = await stat(file);
    const f = { path: file, size, mtimeMs, ino, ctimeMs };
    const spec = { descriptor: hotspots, dataDir, filters: [], params: {}, stationFiles: null };
    const held = await own.acquire();
    try {
      // Queued, not started: a large window's file waits while any request uses DuckDB.
      renderings.renderLater(own, 'geojson', spec, [f], new Map([[file, await hashFooter(f)]]), 'quiet');
      expect(renderings.pending).toBe(1);
      const day = { ...request, format: 'geojson' as const, window: { from: parseInstant('2025-07-01')!, to: parseInstant('2025-07-02')! } };
      // Its checks not cached: the request takes the other connection for them, and then none is idle.
      const extract = (await prepareExtract({ ...context(5000), engine: own, checker: new FileChecker(dataDir), inMemoryRows: 100_000, connectionsPerExtract: 1, renderings }, day))!;
      expect(extract.returned).toBe(1000);
      expect(extract.way).toBe('memory');
      expect([renderings.hits, renderings.waiting]).toEqual([0, 0]);
      extract.dispose();
    } finally {
      held.release();
    }
    expect(await until(() => renderings.pending === 0)).toBe(true);
    expect(renderings.files).toBe(1);
    own.close();
  });
});
