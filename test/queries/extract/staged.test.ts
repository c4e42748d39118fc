import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../../datasets/index.ts';
import { runStaged } from '../../../queries/extract/staged-run.ts';
import { runPrepared } from './one-statement.ts';
import { FORMATS } from '../../../queries/formats.ts';
import { compileRows, type RowsQuery } from '../../../queries/sql/compile.ts';
import { compileStaged, type StagedWindow } from '../../../queries/sql/compile-staged.ts';
import { featureBytes } from '../../../queries/extract/in-memory.ts';
import { writeBulkHotspotDays } from '../../helpers/sample-data.ts';
import { openDuck, spec } from '../sql/compile-fixtures.ts';

const hotspots = DATASETS.find((d) => d.name === 'hotspots')!;
let instance: DuckDBInstance;
let c: DuckDBConnection;
let dataDir: string;
const day = (d: string) => path.join(dataDir, `hotspots/date=${d}/a.parquet`);
const query = (files: string[], over: Partial<RowsQuery> = {}): RowsQuery => ({ spec: spec(hotspots, dataDir, {}), files, select: FORMATS.geojson.rows, from: null, to: null, order: 'stored', ...over });
const staged = (files: string[], over: Partial<RowsQuery> = {}): StagedWindow => compileStaged(query(files, over))!;
const tableRows = async (own: DuckDBConnection, s: StagedWindow) => (await own.runAndReadAll(`SELECT count(*)::INTEGER FROM "${s.table.name}"`)).getRows()[0]![0];

beforeAll(async () => {
  ({ instance, c } = await openDuck());
  dataDir = await writeBulkHotspotDays(2);
});
afterAll(() => instance.closeSync());

describe('a window staged through a table (the Feature select planned once)', () => {
  it('the staged Features are the one-statement select\'s, and the table is empty afterwards for every connection', async () => {
    const s = staged([day('2025-08-01'), day('2025-08-02')]);
    const result = await runStaged(c, s, '');
    expect(result.rowCount).toBe(40_000);
    const direct = await runPrepared(c, compileRows({ ...query([day('2025-08-01'), day('2025-08-02')]), bindFiles: true }), '');
    expect(featureBytes(result).equals(featureBytes(direct))).toBe(true);
    const other = await instance.connect();
    expect(await tableRows(c, s)).toBe(0);
    expect(await tableRows(other, s)).toBe(0);
    other.closeSync();
  });

  it('the Feature select binds nothing and reads no file; the files and the window are the fill\'s values', () => {
    const s = staged([day('2025-08-01')], { from: 1754006400000000n, to: 1754010000000000n });
    expect(s.rows).not.toMatch(/\$\d|read_parquet/);
    expect(s.fill.sql).toMatch(/^INSERT INTO "__window_[0-9a-f]{16}" SELECT /);
    expect(s.fill.params).toHaveLength(2);
    expect(s.fill.files).toEqual([day('2025-08-01')]);
    expect(staged([day('2025-08-02')]).rows).toBe(s.rows);
  });

  it('burnt areas (WKB decoded in JavaScript) and row limits are not staged', () => {
    const burnt = DATASETS.find((d) => d.name === 'burnt-areas')!;
    expect(compileStaged({ ...query([]), spec: spec(burnt, dataDir, {}) })).toBeNull();
    expect(compileStaged(query([day('2025-08-01')], { limit: 10 }))).toBeNull();
  });

  it('a fill that fails is an error, the transaction is rolled back and the connection answers the next window', async () => {
    const broken = path.join(dataDir, 'broken.parquet');
    await writeFile(broken, 'not parquet');
    await expect(runStaged(c, staged([day('2025-08-01'), broken]), '')).rejects.toThrow();
    await expect(c.run('ROLLBACK')).rejects.toThrow(/no transaction/i);
    expect((await runStaged(c, staged([day('2025-08-02')]), '')).rowCount).toBe(20_000);
  });

  it('a connection somehow left inside a transaction (open, or invalidated by an error) is rolled back first, before the table is first created too', async () => {
    const fresh = await DuckDBInstance.create(':memory:');
    const own = await fresh.connect();
    const s = staged([day('2025-08-01')]);
    await own.run('BEGIN TRANSACTION');
    expect((await runStaged(own, s, '')).rowCount).toBe(20_000);
    await own.run('BEGIN TRANSACTION');
    await expect(own.run('SELECT * FROM no_such_table')).rejects.toThrow();
    expect((await runStaged(own, s, '')).rowCount).toBe(20_000);
    await expect(own.run('ROLLBACK')).rejects.toThrow(/no transaction/i);
    // The table outlived every rollback: another connection finds it, empty.
    expect(await tableRows(await fresh.connect(), s)).toBe(0);
    fresh.closeSync();
  });

  it('an abort between statements stops the window before its Features are selected, and ends the transaction', async () => {
    const own = await instance.connect();
    const abort = new AbortController();
    const s = staged([day('2025-08-01')]);
    const prepare = own.prepare.bind(own);
    own.prepare = async (sql: string) => {
      if (sql === s.fill.sql) abort.abort(new Error('client went away'));
      return prepare(sql);
    };
    await expect(runStaged(own, s, 'abort-test', abort.signal)).rejects.toThrow('client went away');
    await expect(own.run('ROLLBACK')).rejects.toThrow(/no transaction/i);
    own.closeSync();
  });

  it('an interrupt landing anywhere (a request that goes away: the fill, the select, the rollback) leaves no transaction open and no row behind', async () => {
    const own = await instance.connect();
    const s = staged([day('2025-08-01'), day('2025-08-02')]);
    const outcomes = new Set<string>();
    for (let round = 0; round < 40; round++) {
      const running = runStaged(own, s, '').then(
        () => 'answered',
        (e: Error) => (/interrupt/i.test(e.message) ? 'interrupted' : e.message),
      );
      // One interrupt, as a request's abort sends, after a different delay each round.
      await new Promise((r) => setTimeout(r, round % 20));
      for (let tick = 0; tick < round % 7; tick++) await new Promise((r) => setImmediate(r));
      own.interrupt();
      outcomes.add(await running);
      await expect(own.run('ROLLBACK')).rejects.toThrow(/no transaction/i);
    }
    expect([...outcomes].every((o) => o === 'answered' || o === 'interrupted')).toBe(true);
    expect(outcomes.has('interrupted')).toBe(true);
    expect((await runStaged(own, s, '')).rowCount).toBe(40_000);
    expect(await tableRows(own, s)).toBe(0);
    own.closeSync();
  });

  it('connections that meet the table for the first time at the same moment all create it and answer', async () => {
    const fresh = await DuckDBInstance.create(':memory:');
    const own = await Promise.all([1, 2, 3, 4, 5, 6].map(() => fresh.connect()));
    const counts = await Promise.all(own.map((x) => runStaged(x, staged([day('2025-08-01')]), '').then((r) => r.rowCount)));
    expect(counts).toEqual(own.map(() => 20_000));
    fresh.closeSync();
  });
});
