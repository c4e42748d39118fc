import { copyFile, rename, rm, truncate, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { col } from '../../datasets/descriptor.ts';
import { fileColumns } from '../../datasets/index.ts';
import { hotspots } from '../../datasets/hotspots.ts';
import { hotspot, tempDir, writeChain } from '../helpers/fixtures.ts';
import { writeParquet } from '../helpers/parquet.ts';
import { CHAIN } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function hotspotDir(): Promise<string> {
  const dir = await tempDir();
  await writeParquet(path.join(dir, 'hotspots/date=2025-08-01/a.parquet'), hotspots, [hotspot('h1', '2025-08-01T06:00:00Z')]);
  await writeParquet(path.join(dir, 'hotspots/date=2025-08-05/a.parquet'), hotspots, [hotspot('h5', '2025-08-05T06:00:00Z')]);
  await writeChain(dir, 'hotspots', CHAIN);
  return dir;
}

async function request(dir: string, query: string) {
  server ??= await startServer(dir);
  const r = await server.get(`/api/v1/hotspots?${query}`);
  return { status: r.status, headers: r.headers, text: await r.text() };
}

async function expect503(dir: string, query: string) {
  const r = await request(dir, query);
  expect(r.status).toBe(503);
  expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.text).not.toMatch(/parquet|\/tmp|SELECT|read_parquet/i);
  return JSON.parse(r.text);
}

describe('200-empty means the service looked', () => {
  it('a window with no partitions is a 200 empty collection', async () => {
    const r = await request(await hotspotDir(), 'from=2025-09-01&to=2025-09-02');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toMatchObject({ features: [], meta: { returned: 0, truncated: false } });
  });

  it('an empty partition file gives a header-only CSV', async () => {
    const dir = await hotspotDir();
    await writeParquet(path.join(dir, 'hotspots/date=2025-08-10/empty.parquet'), hotspots, []);
    const r = await request(dir, 'from=2025-08-10&to=2025-08-11&format=csv');
    expect(r.status).toBe(200);
    expect(r.text.split('\n')).toEqual([expect.stringMatching(/^id,product,/), '']);
  });

  it('observation says the chain never ran when _chain.json is absent', async () => {
    const dir = await hotspotDir();
    await rm(path.join(dir, 'hotspots/_chain.json'));
    const r = await request(dir, 'from=2025-08-01&to=2025-08-02');
    expect(JSON.parse(r.text).meta.observation).toEqual({ chainRan: false, lastSuccessUtc: null, ageSeconds: null });
  });
});

describe('503 means the service did not look, decided before any byte', () => {
  it('dataset folder missing', async () => {
    const dir = await hotspotDir();
    await rm(path.join(dir, 'hotspots'), { recursive: true });
    await expect503(dir, 'from=2025-08-01&to=2025-08-02');
  });

  it('_chain.json says available: false', async () => {
    const dir = await hotspotDir();
    await writeChain(dir, 'hotspots', { ...CHAIN, available: false, message: 'upstream down' });
    const body = await expect503(dir, 'from=2025-08-01&to=2025-08-02');
    expect(body.status).toBe(503);
  });

  it('a truncated Parquet file inside the window, but not outside it', async () => {
    const dir = await hotspotDir();
    const bad = path.join(dir, 'hotspots/date=2025-08-05/b.parquet');
    await copyFile(path.join(dir, 'hotspots/date=2025-08-05/a.parquet'), bad);
    await truncate(bad, 200);
    await expect503(dir, 'from=2025-08-05&to=2025-08-06');
    expect((await request(dir, 'from=2025-08-01&to=2025-08-02')).status).toBe(200);
  });

  it('a file whose schema does not match (wrong type) inside the window', async () => {
    const dir = await hotspotDir();
    const columns = fileColumns(hotspots).map((c) => (c.name === 'frp' ? col('frp', 'VARCHAR', true, '') : c));
    await writeParquet(path.join(dir, 'hotspots/date=2025-08-05/b.parquet'), hotspots, [hotspot('x', '2025-08-05T07:00:00Z', { frp: 'high' })], columns);
    await expect503(dir, 'from=2025-08-05&to=2025-08-06&format=csv');
  });

  it('a file missing a column inside the window; extra columns are fine', async () => {
    const dir = await hotspotDir();
    const missing = fileColumns(hotspots).filter((c) => c.name !== 'daynight');
    // `filename` is also the name DuckDB would give its own file column: it must not collide.
    const extra = [...fileColumns(hotspots), col('ingestBatch', 'VARCHAR', true, ''), col('filename', 'VARCHAR', true, '')];
    await writeParquet(path.join(dir, 'hotspots/date=2025-08-01/extra.parquet'), hotspots, [hotspot('e', '2025-08-01T07:00:00Z', { ingestBatch: 'b1', filename: 'orig.csv' })], extra);
    const ok = await request(dir, 'from=2025-08-01&to=2025-08-02');
    expect(JSON.parse(ok.text).features.map((f: any) => f.id)).toEqual(['h1', 'e']);
    await writeParquet(path.join(dir, 'hotspots/date=2025-08-05/b.parquet'), hotspots, [hotspot('x', '2025-08-05T07:00:00Z')], missing);
    await expect503(dir, 'from=2025-08-05&to=2025-08-06');
  });
});

describe('every row must lie inside its partition', () => {
  it('a file holding a row of another day makes its windows 503 instead of losing or misordering the row', async () => {
    const dir = await hotspotDir();
    await writeParquet(path.join(dir, 'hotspots/date=2025-08-05/stray.parquet'), hotspots, [hotspot('stray', '2025-08-04T23:00:00Z')]);
    await expect503(dir, 'from=2025-08-04&to=2025-08-06');
    expect((await request(dir, 'from=2025-08-01&to=2025-08-02')).status).toBe(200);
  });
});

describe('operators update by dropping files', () => {
  it('a new partition file is served by the next request, no restart; _ and . files are ignored', async () => {
    const dir = await hotspotDir();
    const first = await request(dir, 'from=2025-08-01&to=2025-08-02&format=csv');
    expect(first.headers.get('x-returned')).toBe('1');
    const staging = path.join(dir, 'hotspots/date=2025-08-01/_incoming.parquet');
    await writeParquet(staging, hotspots, [hotspot('h2', '2025-08-01T08:00:00Z')]);
    await writeFile(path.join(dir, 'hotspots/date=2025-08-01/.partial.parquet'), 'not parquet at all');
    await writeFile(path.join(dir, 'hotspots/date=2025-08-01/README.txt'), 'notes');
    const staged = await request(dir, 'from=2025-08-01&to=2025-08-02&format=csv');
    expect(staged.status).toBe(200);
    expect(staged.headers.get('x-returned')).toBe('1');
    await rename(staging, path.join(dir, 'hotspots/date=2025-08-01/b.parquet'));
    const after = await request(dir, 'from=2025-08-01&to=2025-08-02&format=csv');
    expect(after.headers.get('x-returned')).toBe('2');
    expect(after.headers.get('x-data-version')).not.toBe(first.headers.get('x-data-version'));
  });

  it('a new day partition appears without restart', async () => {
    const dir = await hotspotDir();
    expect((await request(dir, 'from=2025-08-02&to=2025-08-03&format=csv')).headers.get('x-returned')).toBe('0');
    await mkdir(path.join(dir, 'hotspots/date=2025-08-02'));
    await writeParquet(path.join(dir, 'hotspots/date=2025-08-02/a.parquet'), hotspots, [hotspot('h2', '2025-08-02T08:00:00Z')]);
    expect((await request(dir, 'from=2025-08-02&to=2025-08-03&format=csv')).headers.get('x-returned')).toBe('1');
  });
});
