import { cp, mkdir, rename } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { bulkHotspotsSql } from '../../helpers/aggregate-data.ts';
import { CHAIN } from '../../helpers/sample-data.ts';
import { tempDir, writeChain } from '../../helpers/fixtures.ts';
import { serverPerTest, type TestServer } from '../../helpers/server.ts';
import { waitFor } from '../../helpers/http.ts';

const serve = serverPerTest();

/**
 * Three days of 60,000 detections each in two files a day, row groups of 5,000 rows (work DuckDB
 * splits between threads), fractional FRP whose plain sum depends on the order of addition
 * (DuckDB's own sum(frp) by country over these files gives other last digits from one run to the
 * next with 4 threads).
 */
async function bulkDir(): Promise<string> {
  const dir = await tempDir();
  const c = await (await DuckDBInstance.create(':memory:')).connect();
  for (const day of ['01', '02', '03']) {
    for (const part of ['a', 'b']) {
      const file = path.join(dir, `hotspots/date=2025-07-${day}/part-${part}.parquet`);
      await mkdir(path.dirname(file), { recursive: true });
      const sql = bulkHotspotsSql({ day, idPrefix: `${day}${part}`, rows: part === 'a' ? 40000 : 20000, step: 1, frp: '(hash(i * 13) % 100000) / 1000.0 + 0.1' });
      await c.run(`COPY (${sql}) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 5000)`);
    }
  }
  c.closeSync();
  await writeChain(dir, 'hotspots', CHAIN);
  return dir;
}

const QUERIES = [
  '/api/v1/hotspots/aggregate?from=2025-07-01&to=2025-07-04&groupBy=country&stats=frp.sum,frp.mean,frp.max,bright_ti4.mean&format=csv',
  '/api/v1/hotspots/aggregate?from=2025-07-01T06:00:00Z&to=2025-07-04&interval=all&groupBy=grid,product&cell=0.25&stats=frp.sum,frp.mean',
  '/api/v1/hotspots/aggregate?from=2025-07-01&to=2025-07-04&interval=hour&stats=frp.sum,scan.sum&format=csv',
  '/api/v1/hotspots/aggregate?from=2025-07-01T12:00:00Z&to=2025-07-04&interval=week&groupBy=daynight,country&stats=frp.mean&format=csv',
];

/** One request at a time, so a request finds idle connections to compute parts of its window on. */
async function bodies(s: TestServer): Promise<string[]> {
  const out: string[] = [];
  for (const q of QUERIES) out.push((await (await s.get(q)).text()).replace(/"ageSeconds":\d+/, '"ageSeconds":0'));
  return out;
}

describe('an aggregate is byte-identical however it is computed', () => {
  it('across DUCKDB_THREADS 1 and 4, one statement or parts side by side, restarts, and files listed in another order', async () => {
    const dir = await bulkDir();
    const one = await bodies(await serve(dir, { DUCKDB_THREADS: '1', EXTRACT_CONNECTIONS: '1' }));
    expect(await bodies(await serve(dir, { DUCKDB_THREADS: '1', EXTRACT_CONNECTIONS: '3', DUCKDB_CONNECTIONS: '4' }))).toEqual(one);
    const four = await bodies(await serve(dir, { DUCKDB_THREADS: '4' }));
    const again = await bodies(await serve(dir, { DUCKDB_THREADS: '4' }));
    const copy = await tempDir();
    await cp(dir, copy, { recursive: true });
    for (const day of ['01', '02', '03']) {
      const p = path.join(copy, `hotspots/date=2025-07-${day}`);
      await rename(path.join(p, 'part-a.parquet'), path.join(p, 'z-part-a.parquet'));
    }
    const renamed = await bodies(await serve(copy, { DUCKDB_THREADS: '4' }));
    expect(four).toEqual(one);
    expect(again).toEqual(one);
    expect(renamed).toEqual(one);
    expect(one[0]!.split('\n')).toHaveLength(3 * 4 + 2);
    expect(one[2]!.split('\n')).toHaveLength(3 * 12 + 2);
  }, 120_000);
});

describe('a client gone mid-aggregate', () => {
  it('interrupts every part and gives every connection back; the next request is answered', async () => {
    const dir = await bulkDir();
    const s = await serve(dir, { EXTRACT_CONNECTIONS: '3', DUCKDB_CONNECTIONS: '4' });
    const controller = new AbortController();
    const gone = s.get(QUERIES[2]!, { signal: controller.signal }).catch((e: unknown) => e);
    expect(await waitFor(() => s.engine.busy > 0, 10_000)).toBe(true);
    controller.abort();
    // Gone before its answer (an abort error), or, on a fast machine, just after it: connections come back either way.
    await gone;
    expect(await waitFor(() => s.engine.busy === 0, 10_000)).toBe(true);
    expect((await s.get(QUERIES[0]!)).status).toBe(200);
  }, 60_000);
});
