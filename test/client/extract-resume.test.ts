import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractCommand } from '../../client/extract.ts';
import { fireApi } from '../helpers/cli.ts';
import { tempDir, writeChain } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/http.ts';
import { writeBulkHotspots } from '../helpers/parquet.ts';
import { CHAIN } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { captureIo, readManifestFile, responses, sha256 } from './harness.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/fire-api.js');
let server: TestServer;
let out: string;

beforeAll(async () => {
  const dir = await tempDir();
  // 35,000 rows in pages of at most 5,000: a walk of eight windows, long enough to be killed inside.
  await writeBulkHotspots(path.join(dir, 'hotspots/date=2025-07-01/a.parquet'), '2025-07-01', 35_000, 7, 1);
  await writeChain(dir, 'hotspots', CHAIN);
  server = await startServer(dir, { ROW_LIMIT: '5000' });
  out = await tempDir('fire-api-extract-');
});
afterAll(() => server.close());

/** Windows recorded in the resume state (written atomically, so never half a file). */
function recordedWindows(file: string): number {
  try {
    return (JSON.parse(readFileSync(`${file}.resume.json`, 'utf8')) as { pages: unknown[] }).pages.length;
  } catch {
    return 0;
  }
}

/** Runs the real CLI and SIGKILLs it once it has recorded two windows; returns how many it had recorded. */
async function killMidWalk(args: string[], file: string): Promise<number> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, FIRE_API_KEY: server.key }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const reached = await waitFor(() => recordedWindows(file) >= 2 || child.exitCode !== null, 20_000);
  child.kill('SIGKILL');
  await exited;
  expect({ reached, exitCode: child.exitCode, stderr }).toEqual({ reached: true, exitCode: null, stderr: '' });
  return recordedWindows(file);
}

describe('an interrupted extract resumes', () => {
  for (const format of ['geojson', 'csv', 'parquet'] as const) {
    it(`after SIGKILL, the rerun continues from the last completed window and the file equals an uninterrupted run byte for byte (${format})`, async () => {
      const walk = (file: string) => ['extract', 'hotspots', '--from', '2025-07-01', '--to', '2025-07-02', '--format', format, '--out', file, '--base-url', server.url];
      const clean = path.join(out, `clean.${format}`);
      expect(await extractCommand([...walk(clean).slice(1), '--key', server.key], {}, captureIo().io)).toBe(0);
      const pages = (await readManifestFile(`${clean}.manifest.json`)).pages;

      const file = path.join(out, `killed.${format}`);
      const before = await responses(server, 200);
      const recorded = await killMidWalk(walk(file), file);
      expect(recorded).toBeGreaterThanOrEqual(2);
      expect(recorded).toBeLessThan(pages.length);
      expect(existsSync(file)).toBe(false);
      await new Promise((r) => setTimeout(r, 200));
      const afterKill = await responses(server, 200);
      expect(afterKill - before).toBeLessThanOrEqual(recorded + 1);
      // Part of the window in flight may be on disk; make sure some is: the resume must cut it off.
      await appendFile(`${file}.partial`, '{"half":"a window');

      const rerun = await fireApi(walk(file), { FIRE_API_KEY: server.key });
      expect(rerun.stderr).toContain(`resuming: ${recorded} windows`);
      expect(rerun.code).toBe(0);
      // Only the windows not yet recorded were requested again.
      expect((await responses(server, 200)) - afterKill).toBe(pages.length - recorded);
      expect(sha256(await readFile(file))).toBe(sha256(await readFile(clean)));
      const resumed = await readManifestFile(`${file}.manifest.json`);
      expect(resumed.pages.map((p) => [p.request?.from, p.rowsSha256])).toEqual(pages.map((p) => [p.request?.from, p.rowsSha256]));
      expect(existsSync(`${file}.partial`) || existsSync(`${file}.resume.json`)).toBe(false);
    }, 60_000);
  }
});
