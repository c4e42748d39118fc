import { cp, open, readdir, rename, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { hotspots } from '../../datasets/hotspots.ts';
import { hotspot, tempDir } from '../helpers/fixtures.ts';
import { writeBulkHotspots, writeParquet } from '../helpers/parquet.ts';
import { writeSampleData } from '../helpers/sample-data.ts';
import { serverPerTest, type TestServer } from '../helpers/server.ts';

const serve = serverPerTest();
const QUERIES = [
  '/api/v1/hotspots?from=2025-07-01&to=2025-07-04&format=csv',
  '/api/v1/hotspots?from=2025-07-01&to=2025-07-04',
  '/api/v1/hotspots?from=2025-07-01&to=2025-07-04&country=PT&format=csv',
];
/** Bodies with the one field allowed to differ (the chain's age moves with the clock) blanked. */
async function bodies(s: TestServer): Promise<string[]> {
  return Promise.all(QUERIES.map(async (q) => (await (await s.get(q)).text()).replace(/"ageSeconds":\d+/, '"ageSeconds":0')));
}

async function bulkDir(): Promise<string> {
  const dir = await tempDir();
  for (const day of ['01', '02', '03']) {
    await writeBulkHotspots(path.join(dir, `hotspots/date=2025-07-${day}/part-a.parquet`), `2025-07-${day}`, 3000, 5, 7);
    await writeParquet(path.join(dir, `hotspots/date=2025-07-${day}/part-b.parquet`), hotspots, [
      hotspot(`late-${day}`, `2025-07-${day}T00:00:07Z`, { frp: 1e21, bright_ti4: 0.1 + 0.2, scan: 100 }),
    ]);
  }
  return dir;
}

describe('identical request over identical data gives identical bytes', () => {
  it('across restarts and DUCKDB_THREADS 1 versus 2', async () => {
    const dir = await bulkDir();
    const a = await bodies(await serve(dir, { DUCKDB_THREADS: '2' }));
    const b = await bodies(await serve(dir, { DUCKDB_THREADS: '1' }));
    const c = await bodies(await serve(dir, { DUCKDB_THREADS: '2' }));
    expect(b).toEqual(a);
    expect(c).toEqual(a);
    expect(a[0]!.split('\n').length).toBe(3 * 3001 + 2);
  });

  it('across different file names, file order and a copied data folder', async () => {
    const dir = await bulkDir();
    const before = await bodies(await serve(dir));
    const copy = await tempDir();
    await cp(dir, copy, { recursive: true });
    for (const day of ['01', '02', '03']) {
      const p = path.join(copy, `hotspots/date=2025-07-${day}`);
      // Swap the names so the listing order of the two files flips.
      await rename(path.join(p, 'part-a.parquet'), path.join(p, 'tmp.parquet'));
      await rename(path.join(p, 'part-b.parquet'), path.join(p, 'part-a.parquet'));
      await rename(path.join(p, 'tmp.parquet'), path.join(p, 'z-renamed.parquet'));
    }
    expect(await bodies(await serve(copy))).toEqual(before);
  });

  it('files stored in order (no sort) and files that need a sort give the same bytes, in (time, id) order', async () => {
    const write = async (stored: (day: string) => 'ordered' | 'shuffled', split = '') => {
      const dir = await tempDir();
      for (const day of ['01', '02', '03', '04']) {
        await writeBulkHotspots(path.join(dir, `hotspots/date=2025-07-${day}/part-a.parquet`), `2025-07-${day}`, 2000, 3, 7, stored(day));
        if (day === split) await writeParquet(path.join(dir, `hotspots/date=2025-07-${day}/part-b.parquet`), hotspots, [hotspot(`a-${day}`, `2025-07-${day}T00:00:07Z`)]);
      }
      return dir;
    };
    // Groups of two days: presorted groups, a group with one shuffled file, a group with a two-file partition.
    const env = { GROUP_ROWS: '3000' };
    const query = '/api/v1/hotspots?from=2025-07-01&to=2025-07-05&format=csv';
    const body = async (dir: string) => (await (await serve(dir, env)).get(query)).text();
    const ordered = await body(await write(() => 'ordered'));
    expect(await body(await write(() => 'shuffled'))).toBe(ordered);
    const mixed = await body(await write((day) => (day === '02' ? 'shuffled' : 'ordered'), '03'));
    const lines = mixed.trim().split('\n').slice(1);
    expect(lines).toHaveLength(4 * 2000 + 1);
    const keys = lines.map((l) => l.split(','));
    const sortedKeys = [...keys].sort((x, y) => (x[2]! < y[2]! ? -1 : x[2]! > y[2]! ? 1 : x[0]! < y[0]! ? -1 : 1));
    expect(keys.map((k) => k[0])).toEqual(sortedKeys.map((k) => k[0]));
    expect(mixed.split('\n').filter((l) => !l.startsWith('a-03')).join('\n')).toBe(ordered);
  });

  it('numbers in shortest round-trip form, normalised timestamps, fixed key order', async () => {
    const s = await serve(await bulkDir());
    const csv = await (await s.get('/api/v1/hotspots?from=2025-07-01T00:00:07Z&to=2025-07-01T00:00:08Z&format=csv')).text();
    const late = csv.split('\n').find((l) => l.startsWith('late-01'))!;
    expect(late).toContain(',2025-07-01T00:00:07Z,');
    expect(late).toContain(',0.30000000000000004,');
    expect(late).toContain(',100,');
    expect(late).toContain(',1e+21,');
    const geo = (await (await s.get('/api/v1/hotspots?from=2025-07-01T00:00:07Z&to=2025-07-01T00:00:08Z')).json()) as any;
    const f = geo.features.find((x: any) => x.id === 'late-01');
    expect(Object.keys(f)).toEqual(['type', 'id', 'geometry', 'properties']);
    expect(Object.keys(geo.meta)).toEqual(['dataset', 'window', 'query', 'truncated', 'rowLimit', 'returned', 'next', 'observation', 'dataVersion']);
    expect(f.properties.scan).toBe(100);
    expect(f.properties.bright_ti4).toBe(0.30000000000000004);
  });
});

describe('dataVersion fingerprints exactly the files read', () => {
  it('a late file inside the window changes it; a file outside does not; a copy keeps it', async () => {
    const dir = await writeSampleData();
    const s = await serve(dir);
    const version = async (q = '/api/v1/hotspots?from=2025-08-01&to=2025-08-02&format=csv') => {
      const r = await s.get(q);
      await r.arrayBuffer();
      return r.headers.get('x-data-version');
    };
    const v0 = await version();
    await writeParquet(path.join(dir, 'hotspots/date=2025-08-02/late.parquet'), hotspots, [hotspot('x', '2025-08-02T05:00:00Z')]);
    expect(await version()).toBe(v0);
    await writeParquet(path.join(dir, 'hotspots/date=2025-08-01/late.parquet'), hotspots, [hotspot('y', '2025-08-01T05:00:00Z')]);
    const v1 = await version();
    expect(v1).not.toBe(v0);
    const copy = await tempDir();
    await cp(dir, copy, { recursive: true });
    const s2 = await serve(copy);
    const r2 = await s2.get('/api/v1/hotspots?from=2025-08-01&to=2025-08-02&format=csv');
    await r2.arrayBuffer();
    expect(r2.headers.get('x-data-version')).toBe(v1);
  });
});

/** Garbage over one column's data pages (footer, size and whole-second mtime kept). */
async function breakColumn(file: string, column: string): Promise<void> {
  const { mtime, atime } = await stat(file);
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  // A column chunk starts at its dictionary page when it has one: its bytes, and only its, are overwritten.
  const rows = (await c.runAndReadAll(`SELECT coalesce(nullif(dictionary_page_offset, 0), data_page_offset), total_compressed_size FROM parquet_metadata('${file}') WHERE path_in_schema = '${column}'`)).getRows();
  c.closeSync();
  db.closeSync();
  const handle = await open(file, 'r+');
  for (const [offset, size] of rows.map((r) => r.map(Number) as [number, number])) await handle.write(Buffer.alloc(size, 0x5a), 0, size, offset);
  await handle.close();
  await utimes(file, atime, mtime);
}

describe('the data version of a cut response', () => {
  it('covers the partitions up to the cut: a late file after it changes the ETag but not dataVersion', async () => {
    const dir = await writeSampleData();
    const s = await serve(dir, { ROW_LIMIT: '2' });
    const page = async () => {
      const r = await s.get('/api/v1/hotspots?from=2025-08-01&to=2025-08-03&format=csv');
      await r.arrayBuffer();
      return { version: r.headers.get('x-data-version'), etag: r.headers.get('etag'), next: r.headers.get('x-next-from') };
    };
    const before = await page();
    expect(before.next).toBe('2025-08-01T23:59:59.999999Z');
    await writeParquet(path.join(dir, 'hotspots/date=2025-08-02/late.parquet'), hotspots, [hotspot('x', '2025-08-02T05:00:00Z')]);
    const after = await page();
    expect(after.version).toBe(before.version);
    expect(after.etag).not.toBe(before.etag);
    await writeParquet(path.join(dir, 'hotspots/date=2025-08-01/late.parquet'), hotspots, [hotspot('y', '2025-08-01T05:00:00Z')]);
    expect((await page()).version).not.toBe(before.version);
  });
});

describe('ETag and If-None-Match', () => {
  it('a matching If-None-Match is answered 304 without running the query; Vary names Authorization', async () => {
    const dir = await bulkDir();
    // No rows cache: the pages are broken behind an unchanged footer, and the plain request below
    // must read them (a cache would rightly answer with the rows of this unchanged data version).
    const s = await serve(dir, { RESPONSE_CACHE_MB: '0' });
    const q = '/api/v1/hotspots?from=2025-07-01&to=2025-07-02&format=csv';
    const first = await s.get(q);
    await first.arrayBuffer();
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^W\/".+"$/);
    expect(first.headers.get('vary')).toBe('Accept, Accept-Encoding, Authorization');
    const part = path.join(dir, 'hotspots/date=2025-07-01');
    // A payload column the file check does not read (it reads the time, order key and aggregate measure and position columns, and would notice those broken).
    for (const f of await readdir(part)) await breakColumn(path.join(part, f), 'version');
    const again = await s.get(q, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    // Without the tag the broken pages are read (a small window is written whole before the
    // response starts), and the service says it could not look.
    const fresh = await s.get(q);
    expect(fresh.status).toBe(503);
    await fresh.arrayBuffer();
  });

  it('the tag depends on format and query, and changes with the data', async () => {
    const dir = await writeSampleData();
    const s = await serve(dir);
    const tag = async (q: string) => {
      const r = await s.get(q);
      await r.arrayBuffer();
      return r.headers.get('etag');
    };
    const base = '/api/v1/hotspots?from=2025-08-01&to=2025-08-02';
    const t0 = await tag(base);
    expect(await tag(`${base}&format=csv`)).not.toBe(t0);
    expect(await tag(`${base}&country=PT`)).not.toBe(t0);
    expect(await tag(base)).toBe(t0);
    const stale = await s.get(base, { headers: { 'if-none-match': 'W/"something-else", ' + t0 } });
    expect(stale.status).toBe(304);
    await writeParquet(path.join(dir, 'hotspots/date=2025-08-01/late.parquet'), hotspots, [hotspot('y', '2025-08-01T05:00:00Z')]);
    const changed = await s.get(base, { headers: { 'if-none-match': t0! } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(t0);
    await changed.arrayBuffer();
  });
});
