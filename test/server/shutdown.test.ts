import { spawn, type ChildProcess } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../server/keys/key-admin.ts';
import { tempDir } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/http.ts';
import { writeBulkHotspotDays } from '../helpers/sample-data.ts';
import { until } from '../helpers/until.ts';
import { TEST_HOLDER } from '../helpers/server.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/fire-api.js');
const GRACE_MS = 2000;

interface Served {
  child: ChildProcess;
  url: string;
  key: string;
  logs: () => Record<string, any>[];
  exited: Promise<number | null>;
}

/** The real `fire-api serve` in a child process, as an operator runs it. */
async function serve(dataDir: string, more: Record<string, string> = {}): Promise<Served> {
  const keysFile = path.join(await tempDir('fire-api-keys-'), 'keys.json');
  const { key } = await issueKey(keysFile, TEST_HOLDER, 30);
  const env = { ...process.env, DATA_DIR: dataDir, TEMP_DIR: path.join(dataDir, '.tmp'), KEYS_FILE: keysFile, PORT: '0', WARM_FILE_CHECKS: 'false', SHUTDOWN_GRACE_MS: String(GRACE_MS), LOG_LEVEL: 'info', ...more };
  const child = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const logs = () => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>);
  const listening = () => logs().find((l) => String(l.msg).startsWith('Server listening at'));
  if (!(await waitFor(() => listening() !== undefined, 30_000))) throw new Error(`server did not start:\n${out}`);
  return { child, url: String(listening()!.msg).replace('Server listening at ', ''), key, logs, exited };
}

/** A GET whose reader stops after the headers and reads again only once `resume` settles (what arrived is then read out). */
function slowGet(url: string, key: string, resume: Promise<unknown>) {
  let started!: () => void;
  const headers = new Promise<void>((r) => (started = r));
  const done = new Promise<{ status: number; complete: boolean; bytes: number }>((resolve) => {
    const req = http.get(url, { headers: { authorization: `Bearer ${key}` } }, (res) => {
      let bytes = 0;
      res.pause();
      started();
      void resume.then(() => res.resume());
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('close', () => resolve({ status: res.statusCode ?? 0, complete: res.complete, bytes }));
    });
    req.on('error', () => resolve({ status: 0, complete: false, bytes: 0 }));
  });
  return { headers, done };
}

let dir: string;
beforeAll(async () => {
  dir = await writeBulkHotspotDays(6);
}, 60_000);

let served: Served | undefined;
afterAll(() => void served?.child.kill('SIGKILL'));

describe('SIGTERM drains for at most SHUTDOWN_GRACE_MS, then cuts what is left', () => {
  it('a response that finishes within the grace completes; a reader that never reads is cut (a broken transfer), and start and end are logged with counts', async () => {
    served = await serve(dir);
    const { url, key } = served;
    // Reads only once the server has exited: it then finds out whether its transfer was complete.
    const stuck = slowGet(`${url}/api/v1/hotspots?from=2025-08-01&to=2025-08-07&format=csv`, key, served.exited);
    let signalledAt!: () => void;
    const signalled = new Promise<void>((r) => (signalledAt = r));
    // Reads 500 ms after the signal: well within the grace.
    const slow = slowGet(`${url}/api/v1/hotspots?from=2025-08-01&to=2025-08-04&format=csv`, key, signalled.then(() => new Promise((r) => setTimeout(r, 500))));
    // Both responses have started (headers received) before the signal; neither fits in the socket buffers.
    await Promise.all([stuck.headers, slow.headers]);
    const t0 = Date.now();
    served.child.kill('SIGTERM');
    signalledAt();
    const [stuckResult, slowResult] = await Promise.all([stuck.done, slow.done]);
    const code = await served.exited;
    const ms = Date.now() - t0;
    expect(slowResult).toMatchObject({ status: 200, complete: true });
    expect(stuckResult).toMatchObject({ status: 200, complete: false });
    expect(code).toBe(0);
    expect(ms).toBeGreaterThanOrEqual(GRACE_MS - 100);
    expect(ms).toBeLessThan(GRACE_MS + 10_000);
    const logs = served.logs();
    expect(logs.find((l) => String(l.msg).startsWith('shutdown started'))).toMatchObject({ open: 2, graceMs: GRACE_MS });
    expect(logs.find((l) => l.msg === 'shutdown finished')).toMatchObject({ drained: 1, cut: 1 });
    expect(logs.filter((l) => l.level >= 50)).toEqual([]);
    // Nothing of the process is left in TEMP_DIR.
    expect(await readdir(path.join(dir, '.tmp'))).not.toContain(`extracts-${served.child.pid}`);
  }, 60_000);
});

describe('SIGTERM while the files present at start are being rendered', () => {
  it('exits cleanly with renderings under way and waiting, and leaves nothing in TEMP_DIR', async () => {
    // Thirty days in two formats: sixty renderings, seconds of work, so the signal lands among them.
    const many = await writeBulkHotspotDays(30);
    const s = await serve(many, { WARM_FILE_CHECKS: 'true', RENDER_CACHE_MB: '1024' });
    served = s;
    const gauge = async (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(`${s.url}/metrics`)).text())?.[1]);
    // Some rendered, more waiting: a rendering is under way or about to start.
    expect(await until(async () => (await gauge('fire_api_renderings_files')) >= 1 && (await gauge('fire_api_renderings_pending')) >= 2)).toBe(true);
    s.child.kill('SIGTERM');
    // The state meant, not a time: the process ends on its own (a hang is the test's timeout), with code 0.
    expect(await s.exited).toBe(0);
    const logs = s.logs();
    expect(logs.find((l) => l.msg === 'shutdown finished')).toMatchObject({ drained: 0, cut: 0 });
    expect(logs.filter((l) => l.level >= 50)).toEqual([]);
    expect(await readdir(path.join(many, '.tmp'))).not.toContain(`extracts-${s.child.pid}`);
  }, 120_000);
});
