import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractCommand } from '../../client/extract.ts';
import { tempDir, writeChain } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/http.ts';
import { CHAIN, parseCsv } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { captureIo, extractArgs, readManifestFile, responses, sha256, writeTwoDays } from './harness.ts';

let dir: string;
let out: string;
let total: number;
beforeAll(async () => {
  dir = await tempDir();
  total = await writeTwoDays(dir);
  await writeChain(dir, 'hotspots', CHAIN);
  out = await tempDir('fire-api-extract-');
});

const csvIds = async (file: string) => parseCsv(await readFile(file, 'utf8')).slice(1).map((r) => r[0]);

describe('429 and 503 during a walk', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(dir, { ROW_LIMIT: '200', RATE_LIMIT_PER_MINUTE: '4', RATE_LIMIT_WINDOW_MS: '1000', RETRY_AFTER_SECONDS: '1' });
  });
  afterAll(() => server.close());

  it('a walk that hits the rate limit and an unavailable chain mid-way still completes, every row once', async () => {
    const file = path.join(out, 'survived.csv');
    const cap = captureIo();
    const running = extractCommand(extractArgs(server, file, '2025-07-01', '2025-07-03'), {}, cap.io);
    // Mid-walk: once two windows are recorded, the chain reports unavailable for 1.5 s.
    expect(await waitFor(() => existsSync(`${file}.resume.json`) && readPages(`${file}.resume.json`) >= 2, 10_000)).toBe(true);
    await writeChain(dir, 'hotspots', { ...CHAIN, available: false });
    await new Promise((r) => setTimeout(r, 1500));
    await writeChain(dir, 'hotspots', CHAIN);
    expect(await running).toBe(0);
    const ids = await csvIds(file);
    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);
    expect(await responses(server, 429)).toBeGreaterThan(0);
    expect(await responses(server, 503)).toBeGreaterThan(0);
    expect(cap.stderr()).toMatch(/HTTP 429.*retry 1\//);
    expect(cap.stderr()).toMatch(/HTTP 503.*did not look.*retry/);
    expect((await readManifestFile(`${file}.manifest.json`)).rows).toBe(total);
  }, 30_000);

  it('gives up after the bounded retries with a clear message and writes no output file', async () => {
    await writeChain(dir, 'hotspots', { ...CHAIN, available: false });
    try {
      const file = path.join(out, 'gave-up.csv');
      const cap = captureIo();
      expect(await extractCommand(extractArgs(server, file, '2025-07-01', '2025-07-03', ['--retries', '2']), {}, cap.io)).toBe(1);
      expect(cap.stderr()).toMatch(/gave up on window 1 \(from 2025-07-01\) after 2 attempts.*HTTP 503/);
      expect(existsSync(file)).toBe(false);
      expect(existsSync(`${file}.manifest.json`) || existsSync(`${file}.partial`)).toBe(false);
    } finally {
      await writeChain(dir, 'hotspots', CHAIN);
    }
  });
});

const readPages = (file: string): number => {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { pages: unknown[] }).pages.length;
  } catch {
    return 0;
  }
};

/** A proxy in front of the real server that cuts the body of data response number `cutAt` in half and drops the connection. */
async function cuttingProxy(upstream: string, cutAt: number): Promise<{ url: string; close(): Promise<void> }> {
  let n = 0;
  const proxy = http.createServer((req, res) => {
    const cut = ++n === cutAt;
    http.get(`${upstream}${req.url}`, { headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      if (!cut) return void up.pipe(res);
      up.once('data', (chunk: Buffer) => {
        res.write(chunk.subarray(0, chunk.length >> 1), () => res.socket?.destroy());
        up.destroy();
      });
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const { port } = proxy.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => proxy.close(() => r())) };
}

describe('a broken transfer', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(dir, { ROW_LIMIT: '200' });
  });
  afterAll(() => server.close());

  for (const format of ['csv', 'geojson', 'parquet'] as const) {
    it(`mid-page is retried from the page's start: the file equals an undisturbed extract (${format})`, async () => {
      const proxy = await cuttingProxy(server.url, 3);
      try {
        const clean = path.join(out, `clean.${format}`);
        const broken = path.join(out, `broken.${format}`);
        expect(await extractCommand(extractArgs(server, clean, '2025-07-01', '2025-07-03'), {}, captureIo().io)).toBe(0);
        const cap = captureIo();
        const args = extractArgs(server, broken, '2025-07-01', '2025-07-03').map((a) => (a === server.url ? proxy.url : a));
        expect(await extractCommand(args, {}, cap.io)).toBe(0);
        expect(cap.stderr()).toMatch(/window 3 .*(broke off|cut off).*retry 1\//);
        expect(sha256(await readFile(broken))).toBe(sha256(await readFile(clean)));
      } finally {
        await proxy.close();
      }
    });
  }
});
