import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS, type DatasetDescriptor } from '../../../datasets/index.ts';
import { runStaged } from '../../../queries/extract/staged-run.ts';
import { runPrepared } from './one-statement.ts';
import { FORMATS } from '../../../queries/formats.ts';
import { compileRows } from '../../../queries/sql/compile.ts';
import { compileStaged } from '../../../queries/sql/compile-staged.ts';
import { compileCopy, FEATURE_COPY } from '../../../queries/sql/compile-copy.ts';
import { copyInto } from '../../../queries/encode/copy-stream.ts';
import { featureBytes } from '../../../queries/extract/in-memory.ts';
import { MIN_INSTANT } from '../../../queries/instant.ts';
import { renderFeatures, windowRows, type RenderedText } from '../../helpers/renderings.ts';
import { writeBulkHotspotDays } from '../../helpers/sample-data.ts';
import { openDuck, spec, writeFixtures } from '../sql/compile-fixtures.ts';
import { writeEdgeFile } from '../sql/feature-edges.ts';

let instance: DuckDBInstance;
let c: DuckDBConnection;
let work: string;
beforeAll(async () => {
  ({ instance, c } = await openDuck());
  work = await mkdtemp(path.join(os.tmpdir(), 'in-memory-'));
});
afterAll(async () => {
  instance.closeSync();
  await rm(work, { recursive: true, force: true });
});

/** Datasets whose GeoJSON Features DuckDB writes (burnt areas' WKB goes through JavaScript and is never read into memory this way). */
const NATIVE = DATASETS.filter((d) => FORMATS.geojson.native(d));
let copies = 0;

/**
 * The same select three ways: COPY into a temp file (the first separator dropped, as sent), the
 * prepared statement's result in memory, and the rows staged through a table (the way the server takes).
 */
async function bothWays(d: DatasetDescriptor, dataDir: string, files: string[], stationFiles: string[]) {
  const q = compileRows({ spec: spec(d, dataDir, { params: { series: 'corrected' }, stationFiles }), files, select: FORMATS.geojson.rows, from: null, to: null });
  const target = path.join(work, `copy-${copies++}.csv`);
  const rows = await copyInto(c, compileCopy(q, FEATURE_COPY, target, work));
  const copied = (await readFile(target)).subarray(1);
  const bound = compileRows({ spec: spec(d, dataDir, { params: { series: 'corrected' }, stationFiles }), files, select: FORMATS.geojson.rows, from: null, to: null, bindFiles: true });
  expect(bound.sql).not.toContain(files[0]!);
  const result = await runPrepared(c, bound, stationFiles.join());
  const staged = await runStaged(c, compileStaged({ spec: spec(d, dataDir, { params: { series: 'corrected' }, stationFiles }), files, select: FORMATS.geojson.rows, from: null, to: null })!, stationFiles.join());
  expect(staged.rowCount).toBe(result.rowCount);
  expect(featureBytes(staged).equals(featureBytes(result))).toBe(true);
  return { rows, copied, inMemory: featureBytes(result), returned: result.rowCount };
}

describe('a small window read into memory: the bytes the temp-file copy sends', () => {
  it('GeoJSON is the only format read this way, and not for WKB geometry', () => {
    expect(NATIVE.map((d) => d.name)).toEqual(['hotspots', 'fire-danger', 'sensor-stations', 'sensor-readings']);
  });

  it.each(NATIVE.map((d) => [d.name, d] as const))('%s: edge values (NaN, ±Inf, -0, huge and tiny doubles, unicode, control characters, nulls)', async (_name, d) => {
    const dataDir = path.join(work, `edges-${d.name}`);
    const stations = [await writeEdgeFile(c, dataDir, DATASETS.find((x) => x.name === 'sensor-stations')!, 11)];
    const files = d.name === 'sensor-stations' ? stations : [await writeEdgeFile(c, dataDir, d, 7)];
    const { rows, copied, inMemory, returned } = await bothWays(d, dataDir, files, stations);
    expect(returned).toBe(rows);
    expect(rows).toBeGreaterThan(30);
    expect(inMemory.equals(copied)).toBe(true);
  });

  it.each(NATIVE.map((d) => [d.name, d] as const))('%s: the everyday fixtures', async (_name, d) => {
    const { dataDir, files } = await writeFixtures();
    const { rows, copied, inMemory } = await bothWays(d, dataDir, files[d.name]!, files['sensor-stations']!);
    expect(rows).toBeGreaterThan(1);
    expect(inMemory.equals(copied)).toBe(true);
  });

  it('many chunks: 40,000 hotspots in two files', async () => {
    const dataDir = await writeBulkHotspotDays(2);
    const hotspots = DATASETS.find((d) => d.name === 'hotspots')!;
    const files = ['2025-08-01', '2025-08-02'].map((day) => path.join(dataDir, `hotspots/date=${day}/a.parquet`));
    const { rows, copied, inMemory } = await bothWays(hotspots, dataDir, files, []);
    expect(rows).toBe(40_000);
    expect(inMemory.equals(copied)).toBe(true);
  });

  it('a statement is prepared once per connection, text and version; the 32 most recent are kept', async () => {
    const own = await instance.connect();
    const prepare = own.prepare.bind(own);
    let prepared = 0;
    own.prepare = (sql: string) => (prepared++, prepare(sql));
    const value = async (n: number, version: string) => (await (await runPrepared(own, { sql: `SELECT ${n} + CAST($1 AS INTEGER)`, params: ['1'] }, version)).getRows())[0]![0];
    expect(await value(1, 'a')).toBe(2);
    expect(await value(1, 'a')).toBe(2);
    expect(prepared).toBe(1);
    await value(1, 'b');
    expect(prepared).toBe(2);
    for (let n = 2; n <= 32; n++) await value(n, 'a');
    expect(prepared).toBe(33);
    await value(1, 'b'); // the most recent 32 are (1, b) and 2..32: (1, a) was the oldest
    expect(prepared).toBe(33);
    await value(1, 'a');
    expect(prepared).toBe(34);
    own.closeSync();
  });

  it('one statement, prepared once, answers each day\'s file with that file\'s rows (the files are a bound value)', async () => {
    const dataDir = await writeBulkHotspotDays(3);
    const hotspots = DATASETS.find((d) => d.name === 'hotspots')!;
    const own = await instance.connect();
    const prepare = own.prepare.bind(own);
    let prepared = 0;
    own.prepare = (sql: string) => (prepared++, prepare(sql));
    for (const day of ['2025-08-01', '2025-08-02', '2025-08-03', '2025-08-01']) {
      const files = [path.join(dataDir, `hotspots/date=${day}/a.parquet`)];
      const window = { from: BigInt(Date.parse(`${day}T00:30:00Z`)) * 1000n, to: BigInt(Date.parse(`${day}T01:30:00Z`)) * 1000n };
      const q = compileRows({ spec: spec(hotspots, dataDir, {}), files, select: FORMATS.geojson.rows, ...window, order: 'stored' });
      const target = path.join(work, `copy-${copies++}.csv`);
      const rows = await copyInto(c, compileCopy(q, FEATURE_COPY, target, work));
      const result = await runPrepared(own, compileRows({ spec: spec(hotspots, dataDir, {}), files, select: FORMATS.geojson.rows, ...window, order: 'stored', bindFiles: true }), '');
      expect(result.rowCount).toBe(rows);
      expect(rows).toBeGreaterThan(1000);
      expect(featureBytes(result).equals((await readFile(target)).subarray(1))).toBe(true);
    }
    expect(prepared).toBe(1);
    own.closeSync();
  });

  it('a failure is an error, never a short result', async () => {
    const q = compileRows({ spec: spec(DATASETS[0]!, work, {}), files: [path.join(work, 'missing.parquet')], select: FORMATS.geojson.rows, from: null, to: null });
    await expect(runPrepared(c, q, 'v1')).rejects.toThrow();
    await expect(runPrepared(c, compileRows({ spec: spec(DATASETS[0]!, work, {}), files: [path.join(work, 'missing.parquet')], select: FORMATS.geojson.rows, from: null, to: null, bindFiles: true }), 'v1')).rejects.toThrow();
  });

  /** Rows [from, to) of a rendering as a response sends them: the first Feature's comma dropped. */
  const slice = (r: RenderedText, from: bigint | null, to: bigint | null) => {
    const [first, end] = windowRows(r.keys, from, to);
    return first < end ? r.text.subarray(r.offsets[first]! + 1, r.offsets[end]!) : Buffer.alloc(0);
  };
  const staged = async (d: DatasetDescriptor, dataDir: string, files: string[], from: bigint | null, to: bigint | null) =>
    featureBytes(await runStaged(c, compileStaged({ spec: spec(d, dataDir, {}), files, select: FORMATS.geojson.rows, from, to, order: 'sort' })!, ''));

  it('a rendered file gives, for any window, the bytes of the staged select: hotspots\' edge values', async () => {
    const hotspots = DATASETS.find((d) => d.name === 'hotspots')!;
    const dataDir = path.join(work, 'edges-rendered');
    const files = [await writeEdgeFile(c, dataDir, hotspots, 7)];
    const rendered = await renderFeatures(c, spec(hotspots, dataDir, {}), files[0]!, path.join(work, `features-${copies++}`));
    expect(rendered.keys.length).toBeGreaterThan(400);
    expect(slice(rendered, null, null).equals(await staged(hotspots, dataDir, files, null, null))).toBe(true);
    // Windows the wire can ask for (years 0001 to 9999): from and to on rows, between them, and empty.
    const keys = [...new Set(rendered.keys)].filter((k) => k >= MIN_INSTANT && k < 253402300800000000n);
    const windows: [bigint, bigint][] = [[keys[0]!, keys.at(-1)!], [keys[1]!, keys[4]!], [keys[2]! + 1n, keys[3]!], [keys[3]!, keys[3]!], [keys[3]!, keys[3]! + 1n]];
    for (const [from, to] of windows) {
      const expected = await staged(hotspots, dataDir, files, from, to);
      expect(slice(rendered, from, to).equals(expected), `${from} to ${to}`).toBe(true);
    }
  });

  it('a rendered file of 20,000 hotspots over many chunks: hours of the day as staged', async () => {
    const dataDir = await writeBulkHotspotDays(1);
    const hotspots = DATASETS.find((d) => d.name === 'hotspots')!;
    const files = [path.join(dataDir, 'hotspots/date=2025-08-01/a.parquet')];
    const rendered = await renderFeatures(c, spec(hotspots, dataDir, {}), files[0]!, path.join(work, `features-${copies++}`));
    expect(rendered.keys.length).toBe(20_000);
    const day = BigInt(Date.parse('2025-08-01T00:00:00Z')) * 1000n;
    for (let h = 0n; h < 24n; h += 5n) {
      const [from, to] = [day + h * 3_600_000_000n, day + (h + 1n) * 3_600_000_000n];
      expect(slice(rendered, from, to).equals(await staged(hotspots, dataDir, files, from, to))).toBe(true);
    }
  });
});
