import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, rename, truncate } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { issueKey } from '../../server/keys/key-admin.ts';
import { tempDir } from '../helpers/fixtures.ts';
import { writeSampleData } from '../helpers/sample-data.ts';
import { TEST_HOLDER } from '../helpers/server.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/fire-api.js');

interface Served {
  child: ChildProcess;
  url: string;
  key: string;
  lines: string[];
}

/** `fire-api serve` as its own process with the production defaults for file checks, on a free port. */
async function serve(dataDir: string): Promise<Served> {
  const keysFile = path.join(await tempDir('fire-api-keys-'), 'keys.json');
  const { key } = await issueKey(keysFile, TEST_HOLDER, 30);
  const env = { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, TEMP_DIR: await tempDir('fire-api-tmp-'), KEYS_FILE: keysFile, PORT: '0', LOG_LEVEL: 'info', DUCKDB_CONNECTIONS: '2' };
  const child = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  child.stdout!.on('data', (c: Buffer) => {
    const parts = (partial + c.toString()).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
  });
  child.stderr!.on('data', (c: Buffer) => lines.push(c.toString()));
  const listening = await until(() => lines.map((l) => /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(l)?.[1]).find(Boolean), 60_000);
  if (!listening) throw new Error(`server did not start:\n${lines.join('\n')}`);
  return { child, url: listening, key, lines };
}

/** Polls `probe` every 100 ms until it gives a value, or `timeoutMs` passed (undefined). */
async function until<T>(probe: () => T | undefined | Promise<T | undefined>, timeoutMs: number): Promise<T | undefined> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) return undefined;
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface ReadyDataset {
  dataset: string;
  available: boolean;
  files: { ok: number; failing: number; unsorted: number };
  failingFiles: { path: string; problem: string }[];
}

const readyz = async (s: Served, name: string) =>
  ((await (await fetch(`${s.url}/readyz`)).json()) as { datasets: ReadyDataset[] }).datasets.find((d) => d.dataset === name)!;
const metrics = async (s: Served) => (await fetch(`${s.url}/metrics`)).text();
const warnings = (s: Served, file: string) => s.lines.filter((l) => l.includes('data file fails its check') && l.includes(`"file":"${file}"`));

let running: Served | null = null;
afterEach(async () => {
  const child = running?.child;
  running = null;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
});

describe('background file checks in a running server', () => {
  it('a bad file dropped while the server runs is in /readyz and /metrics within 10 s, warned about once; fixing it clears it', async () => {
    const dir = await writeSampleData();
    const s = (running = await serve(dir));
    expect(await until(() => s.lines.some((l) => l.includes('data file checks warmed')), 60_000)).toBe(true);
    expect(await readyz(s, 'hotspots')).toMatchObject({ available: true, files: { ok: 2, failing: 0, unsorted: 0 }, failingFiles: [] });
    expect(await metrics(s)).toContain('fire_api_data_files{dataset="hotspots",state="ok"} 2');

    // Dropped as an operator should: written under a hidden name, renamed into place.
    const bad = 'hotspots/date=2025-08-02/late.parquet';
    await copyFile(path.join(dir, 'hotspots/date=2025-08-01/a.parquet'), path.join(dir, 'hotspots/date=2025-08-02/.late.parquet'));
    await truncate(path.join(dir, 'hotspots/date=2025-08-02/.late.parquet'), 200);
    const dropped = Date.now();
    await rename(path.join(dir, 'hotspots/date=2025-08-02/.late.parquet'), path.join(dir, bad));
    const found = await until(async () => ((await readyz(s, 'hotspots')).files.failing === 1 ? Date.now() - dropped : undefined), 20_000);
    expect(found, 'found within 20 s at all').toBeDefined();
    expect(found!).toBeLessThan(10_000);
    const h = await readyz(s, 'hotspots');
    expect(h).toMatchObject({ available: true, files: { ok: 2, failing: 1, unsorted: 0 } });
    expect(h.failingFiles).toEqual([{ path: bad, problem: expect.stringMatching(/^unreadable: /) }]);
    expect(await metrics(s)).toContain('fire_api_data_files{dataset="hotspots",state="failing"} 1');
    expect(await until(() => warnings(s, bad).length === 1, 5_000)).toBe(true);

    // A later good file is picked up too: rounds went on, and the bad file was not warned about again.
    await copyFile(path.join(dir, 'sensor-readings/date=2025-08-01/a.parquet'), path.join(dir, 'sensor-readings/date=2025-08-01/.b.parquet'));
    await rename(path.join(dir, 'sensor-readings/date=2025-08-01/.b.parquet'), path.join(dir, 'sensor-readings/date=2025-08-01/b.parquet'));
    expect(await until(async () => (await readyz(s, 'sensor-readings')).files.ok === 2, 20_000)).toBe(true);
    expect(warnings(s, bad)).toHaveLength(1);

    // Replaced by a good file (a changed file is checked again): no longer failing.
    await copyFile(path.join(dir, 'hotspots/date=2025-08-02/a.parquet'), path.join(dir, 'hotspots/date=2025-08-02/.fixed.parquet'));
    await rename(path.join(dir, 'hotspots/date=2025-08-02/.fixed.parquet'), path.join(dir, bad));
    expect(await until(async () => ((await readyz(s, 'hotspots')).files.ok === 3 ? true : undefined), 20_000)).toBe(true);
    expect(await readyz(s, 'hotspots')).toMatchObject({ files: { ok: 3, failing: 0, unsorted: 0 }, failingFiles: [] });
    expect(await metrics(s)).toContain('fire_api_data_files{dataset="hotspots",state="failing"} 0');
  }, 120_000);
});
