import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchExtract } from '../../bench/http/http-run.ts';
import { Framing, type RawResponse } from '../../bench/http/raw-get.ts';

const FEATURES = 3000;
const feature = (i: number) => `{"type":"Feature","geometry":null,"properties":{"i":${i},"s":"${'x'.repeat(i % 50)}"}}`;
const geojson = Buffer.from(`{"type":"FeatureCollection","features":[${Array.from({ length: FEATURES }, (_, i) => feature(i)).join(',')}]}\n`);

/** The body a Framing hands on when `wire` arrives cut into pieces of `size`, and whether it ended. */
function framed(wire: Buffer, size: number): { head: RawResponse | null; body: Buffer; ended: boolean } {
  const parts: Buffer[] = [];
  let head: RawResponse | null = null;
  // Each piece is copied out of a buffer that is then overwritten, as the socket's one read buffer is.
  const scratch = Buffer.alloc(size);
  const f = new Framing({ onHead: (h) => (head = h), onBody: (b) => parts.push(Buffer.from(b)) });
  for (let at = 0; at < wire.length; at += size) {
    const n = wire.copy(scratch, 0, at, at + size);
    f.take(scratch.subarray(0, n));
    scratch.fill(0x21);
  }
  return { head, body: Buffer.concat(parts), ended: f.ended };
}

const chunked = (body: Buffer, sizes: number[]) => {
  const out: Buffer[] = [Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Returned: 7\r\n\r\n')];
  let at = 0;
  for (let i = 0; at < body.length; i++) {
    const n = Math.min(sizes[i % sizes.length]!, body.length - at);
    out.push(Buffer.from(`${n.toString(16)}${i % 2 ? ';ext=1' : ''}\r\n`), body.subarray(at, at + n), Buffer.from('\r\n'));
    at += n;
  }
  out.push(Buffer.from('0\r\nX-Trailer: 1\r\n\r\n'));
  return Buffer.concat(out);
};

describe('bench/http/raw-get.ts: a response read from the socket into one buffer', () => {
  const small = geojson.subarray(0, 700);

  it('a chunked body, cut anywhere, is handed on whole and de-chunked; its end is the last chunk and trailers', () => {
    const wire = chunked(small, [1, 17, 100, 3]);
    for (let size = 1; size <= 64; size++) {
      const got = framed(wire, size);
      expect(got.body.equals(small)).toBe(true);
      expect(got.ended).toBe(true);
      expect(got.head).toMatchObject({ status: 200 });
      expect(got.head!.headers.get('x-returned')).toBe('7');
    }
    // Short of its last chunk, or of the trailers' end: not ended.
    expect(framed(wire.subarray(0, wire.length - 10), 13).ended).toBe(false);
    expect(framed(wire.subarray(0, wire.length - 2), 13).ended).toBe(false);
  });

  it('a body by length ends at its length; one without either is read to the close', () => {
    const byLength = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${small.length}\r\n\r\n`), small]);
    for (const size of [1, 7, 64, 4096]) {
      expect(framed(byLength, size)).toMatchObject({ ended: true });
      expect(framed(byLength, size).body.equals(small)).toBe(true);
      expect(framed(byLength.subarray(0, byLength.length - 1), size).ended).toBe(false);
    }
    const toClose = Buffer.concat([Buffer.from('HTTP/1.0 200 OK\r\n\r\n'), small]);
    expect(framed(toClose, 5).body.equals(small)).toBe(true);
  });

  it('a chunk longer than its size, or a size that is not hex, throws', () => {
    expect(() => framed(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n'), 64)).toThrow(/longer than its size/);
    expect(() => framed(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n'), 64)).toThrow(/not one/);
  });

  describe('fetchExtract over a real HTTP server', () => {
    let server: http.Server;
    let base = '';
    beforeAll(async () => {
      server = http.createServer((req, res) => {
        if (req.url === '/length') return res.writeHead(200, { 'content-length': geojson.length, 'x-returned': String(FEATURES) }).end(geojson);
        if (req.url === '/hang') return res.writeHead(200, { 'content-length': geojson.length }).write(geojson.subarray(0, 1000));
        if (req.url === '/cut') {
          res.writeHead(200, { 'content-length': geojson.length });
          return res.write(geojson.subarray(0, 100_000), () => res.destroy());
        }
        res.writeHead(200, { 'x-returned': String(FEATURES) });
        // Chunked, in uneven pieces.
        for (let at = 0; at < geojson.length; at += 9_973) res.write(geojson.subarray(at, at + 9_973));
        res.end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));

    it('counts every Feature and byte of a chunked and a sized body, as node\'s HTTP client (a paced read) does', async () => {
      for (const path of ['/chunked', '/length']) {
        const raw = await fetchExtract(base + path, 'geojson');
        expect(raw).toMatchObject({ status: 200, rows: FEATURES, bytes: geojson.length, returnedHeader: FEATURES, complete: true });
        const paced = await fetchExtract(base + path, 'geojson', {}, { bytesPerSecond: 1e9 });
        expect(paced).toMatchObject({ status: 200, rows: FEATURES, bytes: geojson.length, returnedHeader: FEATURES, complete: true });
      }
    });

    it('a body cut short by the server is reported incomplete, not thrown', async () => {
      const run = await fetchExtract(`${base}/cut`, 'geojson');
      expect(run.status).toBe(200);
      expect(run.bytes).toBe(100_000);
      expect(run.complete).toBe(false);
    });

    it('an abort before or during the response is a run, not an error', async () => {
      const early = new AbortController();
      early.abort();
      expect(await fetchExtract(`${base}/length`, 'geojson', {}, { signal: early.signal })).toMatchObject({ status: 0, complete: false });
      const during = new AbortController();
      const run = await fetchExtract(`${base}/hang`, 'geojson', {}, { signal: during.signal, onHead: () => setImmediate(() => during.abort()) });
      expect(run).toMatchObject({ status: 200, complete: false });
    });
  });
});
