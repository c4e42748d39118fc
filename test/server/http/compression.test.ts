import http from 'node:http';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { negotiateEncoding } from '../../../server/http/compression.ts';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

const ARROW = 'application/vnd.apache.arrow.stream';
const PARQUET = 'application/vnd.apache.parquet';

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body as it crossed the wire, not decoded. */
  body: Buffer;
}

/** A GET whose body is kept exactly as sent (Node's http client never decodes). */
function rawBody(server: TestServer, pathAndQuery: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.url}${pathAndQuery}`, { method, headers: { ...server.auth, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const decode = (r: Raw): Buffer => {
  const coding = r.headers['content-encoding'];
  if (coding === 'gzip') return gunzipSync(r.body);
  if (coding === 'br') return brotliDecompressSync(r.body);
  return r.body;
};

/** GeoJSON's meta carries the chain's age in seconds, which moves between two requests. */
const ageless = (b: Buffer) => b.toString('utf8').replace(/"ageSeconds":\d+/, '"ageSeconds":0');

describe('Accept-Encoding negotiation (RFC 9110 §12.5.3)', () => {
  it.each([
    [undefined, 'identity'],
    ['', 'identity'],
    ['gzip', 'gzip'],
    ['gzip, deflate', 'gzip'],
    ['deflate, gzip, br, zstd', 'br'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=0', 'identity'],
    ['*', 'br'],
    ['*;q=0.5, br;q=0', 'gzip'],
    ['identity', 'identity'],
    ['gzip;q=0.4, identity;q=0.5', 'identity'],
    ['x-gzip', 'gzip'],
    ['deflate', 'identity'],
    ['GZIP;Q=0.9', 'gzip'],
    ['gzip;q=nonsense', 'identity'],
  ])('%s -> %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });
});

describe('compressed responses', () => {
  let sample: TestServer;
  let bulk: TestServer;
  let off: TestServer;
  beforeAll(async () => {
    const dir = await writeSampleData();
    sample = await startServer(dir);
    off = await startServer(dir, { COMPRESS_RESPONSES: 'false', TEMP_DIR: `${dir}/.tmp-off` });
    const bulkDir = path.join(path.dirname(dir), `${path.basename(dir)}-bulk`);
    for (const date of ['2025-07-01', '2025-07-02', '2025-07-03']) await writeBulkHotspots(path.join(bulkDir, `hotspots/date=${date}/part-0.parquet`), date, 3000, 3, 20);
    // Small groups: these windows are streamed group by group, their length unknown before the first byte.
    bulk = await startServer(bulkDir, { GROUP_ROWS: '1000' });
  });
  afterAll(async () => {
    await Promise.all([sample?.close(), bulk?.close(), off?.close()]);
  });

  const cases: [string, () => TestServer, string, Record<string, string>][] = [
    ['CSV held whole', () => sample, '/api/v1/hotspots?from=2025-08-01&to=2025-08-03&format=csv', {}],
    ['GeoJSON held whole', () => sample, '/api/v1/sensor-readings?from=2025-08-01&to=2025-08-03', {}],
    ['WKB polygons as GeoJSON', () => sample, '/api/v1/burnt-areas?from=2025-07-01&to=2025-09-01', {}],
    ['CSV streamed', () => bulk, '/api/v1/hotspots?from=2025-07-01&to=2025-07-04&format=csv', {}],
    ['GeoJSON streamed', () => bulk, '/api/v1/hotspots?from=2025-07-01&to=2025-07-04', {}],
    ['Arrow streamed', () => bulk, '/api/v1/hotspots?from=2025-07-01&to=2025-07-04', { accept: ARROW }],
  ];

  it.each(cases)('%s: gzip and br decode to the identity bytes, with their own ETag and Vary naming Accept-Encoding', async (_name, server, request, headers) => {
    const plain = await rawBody(server(), request, headers);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const tags = new Set([plain.headers.etag]);
    for (const coding of ['gzip', 'br']) {
      const coded = await rawBody(server(), request, { ...headers, 'accept-encoding': coding });
      expect(coded.status).toBe(200);
      expect(coded.headers['content-encoding']).toBe(coding);
      expect(coded.headers.vary).toBe('Accept, Accept-Encoding, Authorization');
      expect(coded.body.length).toBeLessThan(plain.body.length);
      if (coded.headers['content-length'] !== undefined) expect(Number(coded.headers['content-length'])).toBe(coded.body.length);
      expect(ageless(decode(coded))).toBe(ageless(plain.body));
      expect(coded.headers['x-returned']).toBe(plain.headers['x-returned']);
      tags.add(coded.headers.etag);
    }
    expect(tags.size).toBe(3);
  });

  it('the same request and data give the same compressed bytes every time', async () => {
    const request = '/api/v1/hotspots?from=2025-07-01&to=2025-07-04&format=csv';
    for (const coding of ['gzip', 'br']) {
      const a = await rawBody(bulk, request, { 'accept-encoding': coding });
      const b = await rawBody(bulk, request, { 'accept-encoding': coding });
      expect(a.body.equals(b.body)).toBe(true);
    }
  });

  it('each coding revalidates to 304 with its own tag only', async () => {
    const request = '/api/v1/hotspots?from=2025-08-01&to=2025-08-03&format=csv';
    const gz = await rawBody(sample, request, { 'accept-encoding': 'gzip' });
    const plain = await rawBody(sample, request);
    expect((await rawBody(sample, request, { 'accept-encoding': 'gzip', 'if-none-match': gz.headers.etag! })).status).toBe(304);
    expect((await rawBody(sample, request, { 'if-none-match': plain.headers.etag! })).status).toBe(304);
    const crossed = await rawBody(sample, request, { 'accept-encoding': 'gzip', 'if-none-match': plain.headers.etag! });
    expect([crossed.status, crossed.headers['content-encoding']]).toEqual([200, 'gzip']);
  });

  it('Parquet is sent as it is whatever Accept-Encoding says (it is compressed inside)', async () => {
    const r = await rawBody(bulk, '/api/v1/hotspots?from=2025-07-01&to=2025-07-04', { accept: PARQUET, 'accept-encoding': 'gzip, br' });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.body.subarray(0, 4).toString('latin1')).toBe('PAR1');
  });

  it('HEAD says the coding GET would use, without a length it could only know by compressing', async () => {
    const request = '/api/v1/hotspots?from=2025-08-01&to=2025-08-03&format=csv';
    const head = await rawBody(sample, request, { 'accept-encoding': 'gzip' }, 'HEAD');
    const get = await rawBody(sample, request, { 'accept-encoding': 'gzip' });
    expect([head.status, head.headers['content-encoding'], head.headers.etag, head.body.length]).toEqual([200, 'gzip', get.headers.etag, 0]);
    expect(head.headers['content-length']).toBeUndefined();
  });

  it('COMPRESS_RESPONSES=false sends every body as it is', async () => {
    const r = await rawBody(off, '/api/v1/hotspots?from=2025-08-01&to=2025-08-03&format=csv', { 'accept-encoding': 'gzip, br' });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.body.toString('utf8').startsWith('id,')).toBe(true);
  });
});
