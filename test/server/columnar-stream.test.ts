import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../datasets/hotspots.ts';
import { ARROW, arrowTable, type Cell, csvRows, duckdbParquet, fetchBytes, firstDifference, hyparquetKeyValues, hyparquetRowGroupRows, hyparquetRows, objectRows, PARQUET } from '../helpers/columnar.ts';
import { ARROW_BATCH_ROWS } from '../../queries/encode/arrow-ipc.ts';
import { tempDir } from '../helpers/fixtures.ts';
import { rawGet, waitFor } from '../helpers/http.ts';
import { writeBulkHotspots } from '../helpers/parquet.ts';
import { serverPerTest, startServer, type TestServer } from '../helpers/server.ts';

const start = serverPerTest();
const serve = (env: Record<string, string> = {}) => start(dir, env);
const DAY_ROWS = 6_000;

let dir: string;
beforeAll(async () => {
  dir = await tempDir();
  // Four days of 6 000 rows, 5 sharing each second: with GROUP_ROWS 24 000 the first day is a group
  // alone and the other three one group of 18 000 rows, more than one Arrow batch and, with
  // PARQUET_ROW_GROUP_ROWS 8 192, more than one Parquet row group.
  for (const day of ['01', '02', '03', '04']) await writeBulkHotspots(path.join(dir, `hotspots/date=2025-07-${day}/a.parquet`), `2025-07-${day}`, DAY_ROWS, 5, 1, day === '03' ? 'shuffled' : 'ordered');
});

const WINDOW = '/api/v1/hotspots?from=2025-07-01&to=2025-07-05';
const GROUPS = { GROUP_ROWS: String(4 * DAY_ROWS), PARQUET_ROW_GROUP_ROWS: '8192' };

describe('columnar responses over several groups', () => {
  let s: TestServer;
  let csv: Cell[][];
  beforeAll(async () => {
    s = await startServer(dir, GROUPS);
    csv = csvRows(hotspots, await (await s.get(`${WINDOW}&format=csv`)).text());
  });
  afterAll(() => s.close());

  it('Parquet of many groups and row groups equals the CSV rows; one footer counts them all', async () => {
    expect(csv.length).toBe(4 * DAY_ROWS);
    const r = await fetchBytes(s.get, WINDOW, PARQUET);
    // Two groups, the second of 18 000 rows in row groups of 8 192: more row groups than groups, one footer.
    expect(hyparquetRowGroupRows(r.bytes)).toEqual([DAY_ROWS, 8192, 8192, 3 * DAY_ROWS - 2 * 8192]);
    expect(firstDifference(objectRows(hotspots, await hyparquetRows(r.bytes)), csv)).toBeNull();
    const duck = await duckdbParquet(await tempDir(), r.bytes);
    expect(firstDifference(objectRows(hotspots, duck.rows), csv)).toBeNull();
  }, 120_000);

  it('Arrow of many groups and batches equals the CSV rows', async () => {
    const { rows, table } = arrowTable(hotspots, (await fetchBytes(s.get, WINDOW, ARROW)).bytes);
    // Two groups, the second of 18 000 rows in two batches.
    expect(3 * DAY_ROWS).toBeGreaterThan(ARROW_BATCH_ROWS);
    expect(table.batches.map((b) => b.numRows)).toEqual([DAY_ROWS, ARROW_BATCH_ROWS, 3 * DAY_ROWS - ARROW_BATCH_ROWS]);
    expect(firstDifference(objectRows(hotspots, rows), csv)).toBeNull();
  }, 120_000);

  it('a cut response has the CSV headers and the same rows; meta says where to go on', async () => {
    const s = await serve({ ...GROUPS, ROW_LIMIT: String(2.4 * DAY_ROWS + 2) });
    const csvResponse = await s.get(`${WINDOW}&format=csv`);
    const csv = csvRows(hotspots, await csvResponse.text());
    expect(csvResponse.headers.get('x-truncated')).toBe('true');
    for (const accept of [PARQUET, ARROW]) {
      const r = await fetchBytes(s.get, WINDOW, accept);
      for (const h of ['x-truncated', 'x-next-from', 'x-returned', 'x-data-version', 'x-window-from', 'x-window-to']) expect(r.headers.get(h)).toBe(csvResponse.headers.get(h));
      const meta = accept === PARQUET ? hyparquetKeyValues(r.bytes)['fire_api:meta']! : arrowTable(hotspots, r.bytes).metadata['fire_api:meta']!;
      expect(JSON.parse(meta)).toMatchObject({ truncated: true, returned: csv.length, next: { from: csvResponse.headers.get('x-next-from') } });
      const rows = accept === PARQUET ? await hyparquetRows(r.bytes) : arrowTable(hotspots, r.bytes).rows;
      expect(firstDifference(objectRows(hotspots, rows), csv)).toBeNull();
    }
  }, 120_000);
});

describe('identical request over identical data gives identical columnar bytes', () => {
  it('across restarts and DUCKDB_THREADS 1 versus 2', async () => {
    const bodies = async (env: Record<string, string>) => {
      const s = await serve({ ...GROUPS, ...env });
      const out = [(await fetchBytes(s.get, WINDOW, PARQUET)).bytes, (await fetchBytes(s.get, WINDOW, ARROW)).bytes];
      await s.close();
      return out;
    };
    const a = await bodies({ DUCKDB_THREADS: '2' });
    const b = await bodies({ DUCKDB_THREADS: '1' });
    const c = await bodies({ DUCKDB_THREADS: '2', DUCKDB_CONNECTIONS: '1' });
    expect(a[0]!.length).toBeGreaterThan(50_000);
    for (const other of [b, c]) other.forEach((bytes, i) => expect(bytes.equals(a[i]!)).toBe(true));
  }, 180_000);
});

describe('a columnar 200 never ends cleanly short of its rows', () => {
  it('an aborted download returns every connection', async () => {
    const s = await serve(GROUPS);
    for (const accept of [PARQUET, ARROW]) {
      const r = await rawGet(`${s.url}${WINDOW}`, { headers: { ...s.auth, accept }, abortAfterBytes: 1000 });
      expect(r.complete).toBe(false);
    }
    expect(await waitFor(() => s.engine.busy === 0, 10_000)).toBe(true);
  }, 60_000);
});
