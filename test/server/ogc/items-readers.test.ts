import { rename } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeChain } from '../../helpers/fixtures.ts';
import { rawGet, stalledGet, throttledGet, waitFor } from '../../helpers/http.ts';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { CHAIN } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

// OGC items pages as real readers take them: slowly, hanging up, while an operator replaces a file.
// Ten days of 1,000 hotspots; a page of 10,000 features (about 5 MB of GeoJSON) spans them all,
// one group a day, written at most 1 MB ahead of the client.
const DAYS = 10;
const day = (d: number) => `2025-08-${String(d).padStart(2, '0')}`;
const PAGE = `/api/v1/ogc/collections/hotspots/items?limit=10000&datetime=${day(1)}T00:00:00Z/${day(DAYS)}T23:59:59Z`;

let dir: string;
let server: TestServer;
beforeAll(async () => {
  dir = await tempDir();
  for (let d = 1; d <= DAYS; d++) await writeBulkHotspots(path.join(dir, `hotspots/date=${day(d)}/a.parquet`), day(d), 1000, 1, 60);
  await writeChain(dir, 'hotspots', CHAIN);
  server = await startServer(dir, { ROW_LIMIT: '100000', GROUP_ROWS: '1000', EXTRACT_AHEAD_MB: '1' });
}, 60_000);
afterAll(() => server.close());

const ids = (body: string) => (JSON.parse(body) as { features: { id: string }[] }).features.map((f) => f.id);

describe('OGC items pages and real readers', () => {
  it('a reader at 2 MB/s gets the whole page, the same bytes as a fast one', async () => {
    const fast = Buffer.from(await (await server.get(PAGE)).arrayBuffer());
    expect(ids(fast.toString())).toHaveLength(10_000);
    const slow = await throttledGet(`${server.url}${PAGE}`, { headers: server.auth, bytesPerSecond: 2_000_000 });
    expect([slow.status, slow.complete, slow.bytes]).toEqual([200, true, fast.length]);
    expect(slow.ms).toBeGreaterThan(1500);
  });

  it('a reader hanging up mid-page leaves no query running, and the page is answered again', async () => {
    const cut = await rawGet(`${server.url}${PAGE}`, { headers: server.auth, abortAfterBytes: 300_000 });
    expect(cut.complete).toBe(false);
    expect(await waitFor(() => server.engine.busy === 0, 10_000)).toBe(true);
    const again = await rawGet(`${server.url}${PAGE}`, { headers: server.auth });
    expect([again.status, again.complete]).toEqual([200, true]);
  });

  it('a file replaced while a paused reader holds the page: a cut transfer, or the whole page of the version it promised — never rows of both', async () => {
    const before = ids(await (await server.get(PAGE)).text());
    const chunks: Buffer[] = [];
    let headers: Record<string, unknown> = {};
    const done = new Promise<boolean>((resolve) => {
      const req = stalledGet(`${server.url}${PAGE}`, server.auth, (res) => {
        headers = res.headers;
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('close', () => resolve(res.complete));
        // Once the headers are out, the last day is replaced by a file of other rows, then the reader goes on.
        const last = path.join(dir, `hotspots/date=${day(DAYS)}/a.parquet`);
        const swap = path.join(path.dirname(last), '_swap.parquet');
        void writeBulkHotspots(swap, day(DAYS), 1000, 1, 60, 'ordered', 'swapped')
          .then(() => rename(swap, last))
          .then(() => res.resume());
      });
      req.on('error', () => resolve(false));
    });
    const complete = await done;
    expect(headers['x-returned']).toBe('10000');
    if (complete) expect(ids(Buffer.concat(chunks).toString())).toEqual(before);
    else expect(Buffer.concat(chunks).toString()).not.toMatch(/"swapped-/);
    expect(await waitFor(() => server.engine.busy === 0, 10_000)).toBe(true);
    // The next request checks the new file and pages over its rows.
    const after = ids(await (await server.get(PAGE)).text());
    expect(after.filter((id) => id.startsWith('swapped-'))).toHaveLength(1000);
  });
});
