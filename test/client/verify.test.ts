import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../datasets/hotspots.ts';
import { extractCommand } from '../../client/extract.ts';
import { verifyCommand } from '../../client/verify/verify.ts';
import type { VerifyReport, WindowCheck } from '../../client/verify/verify-report.ts';
import { hotspot, tempDir, writeChain } from '../helpers/fixtures.ts';
import { writeParquet } from '../helpers/parquet.ts';
import { CHAIN } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { captureIo, extractArgs, readManifestFile, writeTwoDays } from './harness.ts';

let dir: string;
let server: TestServer;
let manifest: string;

beforeAll(async () => {
  dir = await tempDir();
  await writeTwoDays(dir);
  await writeChain(dir, 'hotspots', CHAIN);
  server = await startServer(dir, { ROW_LIMIT: '200' });
  const file = path.join(await tempDir('fire-api-extract-'), 'fires.csv');
  expect(await extractCommand(extractArgs(server, file, '2025-07-01', '2025-07-03'), {}, captureIo().io)).toBe(0);
  manifest = `${file}.manifest.json`;
});
afterAll(() => server.close());

async function verify(extra: string[] = [], key = server.key) {
  const cap = captureIo();
  const code = await verifyCommand([manifest, ...extra], { FIRE_API_KEY: key }, cap.io);
  return { code, stdout: cap.stdout(), stderr: cap.stderr() };
}

const startsOnDay2 = (w: WindowCheck) => w.request!.from.startsWith('2025-07-02');

describe('verify re-requests every recorded window', () => {
  it('reports every window identical and exits 0 while the data is unchanged', async () => {
    const r = await verify();
    const windows = (await readManifestFile(manifest)).pages.length;
    expect(r.code).toBe(0);
    expect(r.stdout.match(/: identical, \d+ rows\n/g)).toHaveLength(windows);
    expect(r.stdout).toContain('matches the manifest');
    expect(r.stdout).toContain(`${windows} windows: all identical`);
  });

  it('after a late file lands inside the window, reports the touched windows changed with a new data version and exits 1', async () => {
    // Dropped the operator's way: written under an ignored name, then renamed into the partition.
    const late = path.join(dir, 'hotspots/date=2025-07-01/_late.parquet');
    await writeParquet(late, hotspots, [hotspot('late-1', '2025-07-01T00:30:00Z')]);
    await rename(late, path.join(dir, 'hotspots/date=2025-07-01/late.parquet'));
    const r = await verify(['--json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as VerifyReport & { identical: boolean };
    expect(report.identical).toBe(false);
    const changed = report.windows.filter((w) => !w.identical);
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.every((w) => w.dataVersionChanged)).toBe(true);
    // The window holding 00:28-00:56 now has the late row: its cut moved.
    expect(changed[0]).toMatchObject({ request: { from: '2025-07-01T00:28:00Z' }, differences: expect.arrayContaining(['row content differs']) });
    // The first window's rows are untouched although the partition it reads changed.
    expect(report.windows[0]).toMatchObject({ identical: true, dataVersionChanged: true });
    // Windows that start on the second day never read the first day's partition.
    const day2 = report.windows.filter(startsOnDay2);
    expect(day2.length).toBeGreaterThan(1);
    expect(day2.every((w) => w.identical && !w.dataVersionChanged)).toBe(true);
    const text = await verify();
    expect(text.stdout).toMatch(/window 2\/\d+ from=2025-07-01T00:28:00Z to=2025-07-03: CHANGED: .*data version changed/);
  });

  it('a local file that no longer matches its manifest fails verification', async () => {
    const m = await readManifestFile(manifest);
    await writeFile(path.join(path.dirname(manifest), m.file.name), 'edited\n');
    const r = await verify();
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('DIFFERS from the manifest');
  });

  it('exits 3 with the reason when the service refuses the key', async () => {
    const r = await verify([], `frk_nobody00_${'x'.repeat(43)}`);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/could not verify: HTTP 401/);
  });
});
