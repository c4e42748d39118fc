import { readdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/http.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

const PARQUET = 'application/vnd.apache.parquet';
const ARROW = 'application/vnd.apache.arrow.stream';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The connection ended without an error (a clean close, not a reset). */
  closedCleanly: boolean;
}

/** One request with the given HTTP version on a plain socket, read until the server closes it. */
function exchange(server: TestServer, pathAndQuery: string, opts: { version: '1.0' | '1.1'; accept?: string; method?: string; encoding?: string }): Promise<Answer> {
  const { hostname, port } = new URL(server.url);
  const lines = [`${opts.method ?? 'GET'} ${pathAndQuery} HTTP/${opts.version}`, `Host: ${hostname}`, `Authorization: Bearer ${server.key}`, 'Connection: close'];
  if (opts.accept) lines.push(`Accept: ${opts.accept}`);
  if (opts.encoding) lines.push(`Accept-Encoding: ${opts.encoding}`);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let failed = false;
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => (failed = true));
    socket.on('close', () => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error('no response head'));
      const [statusLine, ...headerLines] = all.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: all.subarray(end + 4), closedCleanly: !failed });
    });
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

/** The bytes a chunked body carries, de-chunked. */
function dechunk(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; ; ) {
    const lineEnd = raw.indexOf('\r\n', at);
    const size = Number.parseInt(raw.subarray(at, lineEnd).toString('latin1'), 16);
    if (size === 0) return Buffer.concat(parts);
    parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/** GeoJSON's meta says how old the chain's last success is, in seconds: two requests a second apart differ there only. */
const sameBody = (a: Buffer, b: Buffer) => {
  const ageless = (x: Buffer) => x.toString('latin1').replace(/"ageSeconds":\d+/, '"ageSeconds":0');
  return ageless(a) === ageless(b);
};

const SAMPLE_REQUESTS = [
  '/api/v1/hotspots?from=2025-08-01&to=2025-08-03',
  '/api/v1/hotspots/aggregate?from=2025-08-01&to=2025-08-03&groupBy=country&stats=frp.sum',
  '/api/v1/hotspots/aggregate?from=2025-08-01&to=2025-08-03&interval=hour&format=csv',
  '/api/v1/hotspots?from=2025-08-01&to=2025-08-03&format=csv',
  '/api/v1/burnt-areas?from=2025-07-01&to=2025-09-01',
  '/api/v1/burnt-areas?from=2025-07-01&to=2025-09-01&format=csv',
  '/api/v1/fire-danger?from=2025-08-01&to=2025-08-03',
  '/api/v1/fire-danger?from=2025-08-01&to=2025-08-03&format=csv',
  '/api/v1/sensor-stations',
  '/api/v1/sensor-stations?format=csv',
  '/api/v1/sensor-readings?from=2025-08-01&to=2025-08-03',
  '/api/v1/sensor-readings?from=2025-08-01&to=2025-08-03&format=csv',
];

describe('a length on every body that could be cut silently', () => {
  let sample: TestServer;
  let cached: TestServer;
  let bulk: TestServer;
  let bulkDir: string;
  beforeAll(async () => {
    const dir = await writeSampleData();
    sample = await startServer(dir);
    cached = await startServer(dir, { RESPONSE_CACHE_MB: '8', TEMP_DIR: `${dir}/.tmp-cached` });
    bulkDir = path.join(path.dirname(dir), `${path.basename(dir)}-bulk`);
    for (const date of ['2025-07-01', '2025-07-02', '2025-07-03']) await writeBulkHotspots(path.join(bulkDir, `hotspots/date=${date}/part-0.parquet`), date, 3000, 3, 20);
    // Small groups: a window of these files is streamed group by group, its length unknown before the first byte.
    bulk = await startServer(bulkDir, { GROUP_ROWS: '1000' });
  });
  afterAll(async () => {
    await Promise.all([sample?.close(), cached?.close(), bulk?.close()]);
  });

  it.each(SAMPLE_REQUESTS)('%s: HTTP/1.0 gets the HTTP/1.1 bytes with a Content-Length equal to the body', async (request) => {
    const chunked = await exchange(sample, request, { version: '1.1' });
    expect(chunked.status).toBe(200);
    const body = chunked.headers['transfer-encoding'] === 'chunked' ? dechunk(chunked.body) : chunked.body;
    const plain = await exchange(sample, request, { version: '1.0' });
    expect(Number(plain.headers['content-length'])).toBe(plain.body.length);
    expect(sameBody(plain.body, body)).toBe(true);
  });

  // Aggregates are written as they are sent (chunked on HTTP/1.1), whatever their size.
  it.each(SAMPLE_REQUESTS.filter((r) => !/burnt-areas\?.*from=[^&]*&to=[^&]*$|sensor-stations|\/aggregate\?/.test(r)))(
    '%s: rows written whole before the response carry Content-Length on HTTP/1.1 too, equal to the body',
    async (request) => {
      const a = await exchange(sample, request, { version: '1.1' });
      expect(a.status).toBe(200);
      expect(a.headers['transfer-encoding']).toBeUndefined();
      expect(Number(a.headers['content-length'])).toBe(a.body.length);
    },
  );

  it('rows answered from the rows cache carry the same Content-Length and bytes as the first answer', async () => {
    const request = SAMPLE_REQUESTS[0]!;
    const first = await exchange(cached, request, { version: '1.1' });
    const again = await exchange(cached, request, { version: '1.1' });
    expect(Number(again.headers['content-length'])).toBe(again.body.length);
    expect(sameBody(again.body, first.body)).toBe(true);
    const head = await exchange(cached, request, { version: '1.1', method: 'HEAD' });
    expect([head.status, head.headers['content-length'], head.body.length]).toEqual([200, first.headers['content-length'], 0]);
  });

  it.each([
    ['CSV', '&format=csv', undefined],
    ['GeoJSON', '', undefined],
    ['Parquet', '', PARQUET],
    ['Arrow', '', ARROW],
  ])('%s streamed in groups: chunked on HTTP/1.1, written whole and sent with its length on HTTP/1.0, the same bytes', async (_name, format, accept) => {
    const request = `/api/v1/hotspots?from=2025-07-01&to=2025-07-04${format}`;
    const chunked = await exchange(bulk, request, { version: '1.1', ...(accept ? { accept } : {}) });
    expect(chunked.status).toBe(200);
    expect(chunked.headers['transfer-encoding']).toBe('chunked');
    expect(chunked.headers['content-length']).toBeUndefined();
    const head = await exchange(bulk, request, { version: '1.1', method: 'HEAD', ...(accept ? { accept } : {}) });
    expect([head.status, head.headers['content-length'], head.headers['x-returned']]).toEqual([200, undefined, '9000']);
    const plain = await exchange(bulk, request, { version: '1.0', ...(accept ? { accept } : {}) });
    expect(plain.status).toBe(200);
    expect(plain.headers['x-returned']).toBe('9000');
    expect(Number(plain.headers['content-length'])).toBe(plain.body.length);
    expect(sameBody(plain.body, dechunk(chunked.body))).toBe(true);
  });

  it.each(['gzip', 'br'])('a %s body streamed in groups is written whole for HTTP/1.0 and sent with its length; it decodes to the HTTP/1.1 bytes', async (coding) => {
    const request = '/api/v1/hotspots?from=2025-07-01&to=2025-07-04';
    const plain = await exchange(bulk, request, { version: '1.0', encoding: coding });
    expect([plain.status, plain.headers['content-encoding']]).toEqual([200, coding]);
    expect(Number(plain.headers['content-length'])).toBe(plain.body.length);
    const chunked = await exchange(bulk, request, { version: '1.1' });
    const decode = coding === 'gzip' ? gunzipSync : brotliDecompressSync;
    expect(sameBody(decode(plain.body), dechunk(chunked.body))).toBe(true);
  });

  it('an HTTP/1.0 client that hangs up while its response is written whole leaves no file and no reserved space behind', async () => {
    const { hostname, port } = new URL(bulk.url);
    const socket = net.connect(Number(port), hostname);
    socket.write(`GET /api/v1/hotspots?from=2025-07-01&to=2025-07-04&format=csv HTTP/1.0\r\nAuthorization: Bearer ${bulk.key}\r\n\r\n`);
    await new Promise((r) => setTimeout(r, 30));
    socket.destroy();
    const settled = await waitFor(() => bulk.context.extract.tempBudget.usedBytes === 0, 5000);
    expect(settled).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    expect(await readdir(bulk.context.extract.tempDir)).toEqual([]);
  });

  it('an HTTP/1.0 response larger than TEMP_DIR_MAX_MB is a 503 that says to narrow the window or use HTTP/1.1, and gives its space back', async () => {
    // Room for the groups written ahead (0.1 MB) but not for the whole response (about 1.3 MB).
    const small = await startServer(bulkDir, { GROUP_ROWS: '1000', EXTRACT_AHEAD_MB: '0.1', TEMP_DIR_MAX_MB: '0.5', TEMP_DIR: `${bulkDir}/.tmp-small` });
    try {
      const request = '/api/v1/hotspots?from=2025-07-01&to=2025-07-04&format=csv';
      const plain = await exchange(small, request, { version: '1.0' });
      expect(plain.status).toBe(503);
      expect(JSON.parse(plain.body.toString('utf8')).detail).toMatch(/Narrow the window \(from, to\) or use HTTP\/1\.1/);
      expect(plain.headers['retry-after']).toMatch(/^\d+$/);
      expect(small.context.extract.tempBudget.usedBytes).toBe(0);
      const chunked = await exchange(small, request, { version: '1.1' });
      expect(chunked.status).toBe(200);
    } finally {
      await small.close();
    }
  });

  it('an HTTP/1.0 aggregate larger than TEMP_DIR_MAX_MB is a clean 503: none of the 200\'s headers, no content coding', async () => {
    const small = await startServer(bulkDir, { TEMP_DIR_MAX_MB: '0.001', AGGREGATE_CACHE_MB: '0', TEMP_DIR: `${bulkDir}/.tmp-tiny` });
    try {
      const request = '/api/v1/hotspots/aggregate?from=2025-07-01&to=2025-07-04&interval=hour&groupBy=grid&cell=0.01&stats=frp.sum';
      const plain = await exchange(small, request, { version: '1.0', encoding: 'gzip' });
      expect(plain.status).toBe(503);
      expect(plain.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(plain.headers['content-encoding']).toBeUndefined();
      // Rate-limit headers belong to every answer; the answer's meta headers only to the 200.
      expect(Object.keys(plain.headers).filter((h) => h.startsWith('x-') && !/^x-(ratelimit-|request-id)/.test(h))).toEqual([]);
      expect(JSON.parse(plain.body.toString('utf8')).detail).toMatch(/use HTTP\/1\.1/);
      expect(small.context.extract.tempBudget.usedBytes).toBe(0);
    } finally {
      await small.close();
    }
  });
});
