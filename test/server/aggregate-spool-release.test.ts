import { readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HELD_GROUPS, SPOOL_ROWS } from '../../queries/stream/aggregate-spooled.ts';
import { PARQUET } from '../helpers/columnar.ts';
import { tempDir, writeChain } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/http.ts';
import { writeSpreadHotspots } from '../helpers/parquet.ts';
import { CHAIN } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/** Three days of one group a row, together past SPOOL_ROWS and HELD_GROUPS: the window's groups are spooled and read back from disk. */
const DAY_ROWS = Math.ceil(SPOOL_ROWS * 0.6);
const DAYS = ['2025-08-01', '2025-08-02', '2025-08-03'];
const GRID = '/api/v1/hotspots/aggregate?from=2025-08-01&to=2025-08-04&interval=day&groupBy=grid&cell=0.01&stats=frp.sum,frp.mean,scan.count';

let dir: string;
let server: TestServer;
beforeAll(async () => {
  dir = await tempDir();
  for (const day of DAYS) await writeSpreadHotspots(path.join(dir, `hotspots/date=${day}/a.parquet`), day, DAY_ROWS);
  await writeChain(dir, 'hotspots', CHAIN);
  server = await startServer(dir, { RESPONSE_CACHE_MB: '0' });
}, 120_000);
afterAll(async () => {
  await server?.close();
});

/** Spool files in this process's TEMP_DIR folder, and those it still holds open (a file is read after it has left the folder). */
async function openSpools(): Promise<string[]> {
  const folder = (await readdir(path.join(dir, '.tmp'))).filter((f) => f.startsWith(`extracts-${process.pid}`));
  const listed = (await Promise.all(folder.map((f) => readdir(path.join(dir, '.tmp', f))))).flat().filter((f) => f.includes('-part'));
  const held = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return [...listed, ...held.filter((target) => target.includes(dir) && target.includes('-part'))];
}

/** Waits until no spool file is left and the server's temp budget holds nothing; what is left otherwise. */
async function settled(s: TestServer): Promise<{ files: string[]; usedBytes: number }> {
  let files: string[] = ['?'];
  await waitFor(() => (void openSpools().then((f) => (files = f)), files.length === 0 && s.context.extract.tempBudget.usedBytes === 0), 15_000);
  return { files, usedBytes: s.context.extract.tempBudget.usedBytes };
}

describe('spooled groups never read', () => {
  it('go with their temp space once a HEAD with a content coding (whose body is never written) is answered', async () => {
    expect(DAYS.length * DAY_ROWS).toBeGreaterThan(HELD_GROUPS);
    const r = await server.get(GRID, { method: 'HEAD', headers: { 'accept-encoding': 'gzip' } });
    expect([r.status, r.headers.get('content-encoding'), Number(r.headers.get('x-returned'))]).toEqual([200, 'gzip', DAYS.length * DAY_ROWS]);
    expect(await settled(server)).toEqual({ files: [], usedBytes: 0 });
  }, 60_000);

  it('go with their temp space when the Parquet file cannot be written after them (503)', async () => {
    // Room for the spool, which takes it all as it grows in steps, none left for the Parquet file written from it.
    const small = await startServer(dir, { RESPONSE_CACHE_MB: '0', TEMP_DIR_MAX_MB: '12' });
    try {
      const csv = await small.get(`${GRID}&format=csv`);
      expect([csv.status, Number(csv.headers.get('x-returned'))]).toEqual([200, DAYS.length * DAY_ROWS]);
      await csv.arrayBuffer();
      expect(await settled(small)).toEqual({ files: [], usedBytes: 0 });
      const r = await small.get(GRID, { headers: { accept: PARQUET } });
      expect([r.status, r.headers.get('content-type')]).toEqual([503, expect.stringMatching(/^application\/problem\+json/)]);
      await r.arrayBuffer();
      expect(await settled(small)).toEqual({ files: [], usedBytes: 0 });
    } finally {
      await small.close();
    }
  }, 90_000);
});
