import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractCommand } from '../../client/extract.ts';
import { verifyCommand } from '../../client/verify/verify.ts';
import { tempDir, writeChain } from '../helpers/fixtures.ts';
import { startFramingProxy, type Framing, type FramingProxy, type Upstream } from '../helpers/framing-proxy.ts';
import { CHAIN } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { captureIo, extractArgs, readManifestFile, sha256, writeTwoDays } from './harness.ts';

const FORMATS = ['csv', 'geojson', 'parquet'] as const;
type Format = (typeof FORMATS)[number];
const FROM = '2025-07-01';
const TO = '2025-07-03';

let server: TestServer;
let out: string;
/** SHA-256 of each format's undisturbed extract, and its number of windows. */
const clean = new Map<Format, { sha: string; pages: number; manifest: string }>();

beforeAll(async () => {
  const dir = await tempDir();
  await writeTwoDays(dir);
  await writeChain(dir, 'hotspots', CHAIN);
  server = await startServer(dir, { ROW_LIMIT: '200' });
  out = await tempDir('fire-api-cuts-');
  for (const format of FORMATS) {
    const file = path.join(out, `clean.${format}`);
    expect(await extractCommand(extractArgs(server, file, FROM, TO), {}, captureIo().io)).toBe(0);
    const manifest = `${file}.manifest.json`;
    clean.set(format, { sha: sha256(await readFile(file)), pages: (await readManifestFile(manifest)).pages.length, manifest });
  }
});
afterAll(() => server.close());

/** Where the first attempt's body ends: inside a CSV record (a few bytes past a line break), halfway through a GeoJSON document or a Parquet file. */
const midRecord = (format: Format, body: Buffer): number => (format === 'csv' ? body.indexOf(0x0a, body.length >> 1) + 4 : body.length >> 1);

/** Answer `n` (counted from 1) framed as `how(answer)` says; every other answer passes whole. */
const disturb = (n: number, how: (a: Upstream) => Framing) => (i: number, a: Upstream) => (i === n ? how(a) : null);

async function extractVia(proxy: FramingProxy, file: string, extra: string[] = []) {
  const cap = captureIo();
  const args = extractArgs(server, file, FROM, TO, extra).map((a) => (a === server.url ? proxy.url : a));
  const code = await extractCommand(args, {}, cap.io);
  return { code, stderr: cap.stderr() };
}

const CUTS: Record<string, { framing: Framing['framing']; clean?: boolean; says: RegExp }> = {
  'without any length (HTTP/1.0, Connection: close)': { framing: 'close', says: /cut off/ },
  'chunked, broken off': { framing: 'chunked', says: /connection broke off after \d+ bytes/ },
  'chunked, ended cleanly by a proxy that read the cut as the end': { framing: 'chunked', clean: true, says: /cut off/ },
  'with a Content-Length and fewer bytes': { framing: 'length', says: /after \d+ of the \d+ bytes of its Content-Length/ },
};

describe('a body cut mid-record on the first attempt is retried and the extract equals an undisturbed one', () => {
  for (const format of FORMATS) {
    for (const [name, cut] of Object.entries(CUTS)) {
      it.concurrent(`${format}, ${name}`, async ({ expect }) => {
        const proxy = await startFramingProxy(server.url, disturb(3, (a) => ({ ...cut, keep: midRecord(format, a.body) })));
        try {
          const file = path.join(out, `cut-${cut.framing}${cut.clean ? '-clean' : ''}.${format}`);
          const r = await extractVia(proxy, file);
          expect(r.stderr).toMatch(/^window 3 \(from [^)]+\): the (response|connection) .*; retry 1\/7 in 1\.0 s\n$/);
          expect(r.stderr).toMatch(cut.says);
          expect(r.code).toBe(0);
          expect(sha256(await readFile(file))).toBe(clean.get(format)!.sha);
          // Every window once, the cut one twice.
          expect(proxy.requests).toBe(clean.get(format)!.pages + 1);
        } finally {
          await proxy.close();
        }
      });
    }
  }

  it.concurrent('csv, a cut on a record boundary that a proxy ended cleanly: fewer rows than X-Returned', async ({ expect }) => {
    const proxy = await startFramingProxy(server.url, disturb(3, (a) => ({ framing: 'chunked', clean: true, keep: a.body.indexOf(0x0a, a.body.length >> 1) + 1 })));
    try {
      const file = path.join(out, 'cut-on-boundary.csv');
      const r = await extractVia(proxy, file);
      expect(r.stderr).toMatch(/^window 3 .*ended after \d+ of the \d+ rows of its X-Returned, cut on a record boundary.*; retry 1\/7/);
      expect(r.code).toBe(0);
      expect(sha256(await readFile(file))).toBe(clean.get('csv')!.sha);
    } finally {
      await proxy.close();
    }
  });
});

/** X-Returned of an answer moved by `delta`: the body is whole and well-formed, its count is not what the header says. */
const miscounted = (framing: Framing['framing'], delta: number) => (a: Upstream): Framing => ({ framing, clean: true, headers: { 'x-returned': String(Number(a.headers['x-returned']) + delta) } });

const WRONG: [Format, string, (a: Upstream) => Framing, RegExp][] = [
  ['csv', 'a CSV page whose Content-Length proves it whole, with fewer rows than X-Returned', miscounted('length', 1), /fewer than the \d+ of its X-Returned, and is complete: it holds every byte of its Content-Length/],
  ['csv', 'a CSV page with more rows than X-Returned', miscounted('chunked', -1), /more than the \d+ of its X-Returned/],
  ['geojson', 'a complete GeoJSON document with fewer features than X-Returned', miscounted('chunked', 1), /its GeoJSON document is closed/],
  ['parquet', 'a complete Parquet file whose footer counts fewer rows than X-Returned', miscounted('close', 1), /its Parquet file ends with a readable footer/],
];

describe('a complete answer that breaks the contract is final: no retry', () => {
  WRONG.forEach(([format, name, how, says], i) => {
    it.concurrent(name, async ({ expect }) => {
      const proxy = await startFramingProxy(server.url, disturb(2, how));
      try {
        const r = await extractVia(proxy, path.join(out, `wrong-${i}.${format}`), ['--retries', '3']);
        expect(r.stderr).not.toMatch(/retry|gave up/);
        expect(r.stderr).toMatch(/^fire-api extract: the response holds \d+ rows?, /);
        expect(r.stderr).toMatch(says);
        expect(r.stderr).toContain('1 completed windows are kept; run the same command again to resume.');
        expect(r.code).toBe(1);
        expect(proxy.requests).toBe(2);
      } finally {
        await proxy.close();
      }
    });
  });
});

describe('verify treats the same cuts as transient', () => {
  const cases: [Format, string, Framing['framing'], boolean][] = [
    ['csv', 'without any length', 'close', false],
    ['parquet', 'chunked, ended cleanly by a proxy', 'chunked', true],
  ];
  for (const [format, name, framing, cleanEnd] of cases) {
    it.concurrent(`${format}, ${name}: retried, every window identical, exit 0`, async ({ expect }) => {
      const proxy = await startFramingProxy(server.url, disturb(2, (a) => ({ framing, clean: cleanEnd, keep: midRecord(format, a.body) })));
      try {
        const cap = captureIo();
        const code = await verifyCommand([clean.get(format)!.manifest, '--base-url', proxy.url, '--key', server.key], {}, cap.io);
        expect(cap.stderr()).toMatch(/^window 2 \(from [^)]+\): the response was cut off .*; retry 1\/7 in 1\.0 s\n$/);
        expect(code).toBe(0);
        expect(cap.stdout()).toContain(`${clean.get(format)!.pages} windows: all identical`);
      } finally {
        await proxy.close();
      }
    });
  }

  it.concurrent('a complete answer with more rows than X-Returned: could not verify, exit 3, no retry', async ({ expect }) => {
    const proxy = await startFramingProxy(server.url, disturb(2, miscounted('chunked', -1)));
    try {
      const cap = captureIo();
      const code = await verifyCommand([clean.get('csv')!.manifest, '--base-url', proxy.url, '--key', server.key, '--retries', '3'], {}, cap.io);
      expect(cap.stderr()).toMatch(/^fire-api verify: could not verify: the response holds \d+ rows, more than the \d+ of its X-Returned\n$/);
      expect(code).toBe(3);
      expect(proxy.requests).toBe(2);
    } finally {
      await proxy.close();
    }
  });
});
