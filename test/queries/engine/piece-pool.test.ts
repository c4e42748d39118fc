import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PiecePool, sendProgress } from '../../../queries/engine/piece-pool.ts';

const PIECE = 64 * 1024;
const PIECES = 400;

describe('PiecePool: buffers read into again once the response has written them', () => {
  it('never told how to see a piece written, every piece is a new buffer', () => {
    const pool = new PiecePool(PIECE);
    const taken = Array.from({ length: 20 }, () => pool.take());
    expect(new Set(taken).size).toBe(20);
    expect(pool.reused).toBe(0);
  });

  it('told, a buffer is read into again once the bytes handed over with it are written; the 16 last lent at most', () => {
    let [handed, written] = [0, 0];
    const pool = new PiecePool(PIECE);
    pool.sendsTo({ handed: () => handed, written: () => written });
    // Twenty pieces handed over one after another, none written yet.
    const first = Array.from({ length: 20 }, () => {
      const b = pool.take();
      handed += PIECE;
      return b;
    });
    expect(new Set(first).size).toBe(20);
    // The first 17 written: of the 16 last lent (the 4 first are forgotten), pieces 5 to 17 are free.
    written = 17 * PIECE;
    const again = pool.take();
    expect(first.slice(4, 17)).toContain(again);
    expect(pool.reused).toBe(1);
    // One byte short of the 18th piece's end: it stays lent.
    written = 18 * PIECE - 1;
    const taken = Array.from({ length: 12 }, () => pool.take());
    expect(taken.filter((b) => first.slice(4, 17).includes(b))).toHaveLength(12);
    expect(taken).not.toContain(first[17]);
    expect(pool.reused).toBe(13);
    expect(first.slice(17)).not.toContain(pool.take());
  });

  it('a stream\'s bytes are written once neither left in it nor waiting in its destination; an object stream is refused', () => {
    let handed = 0;
    const stream = new Readable({ read: () => undefined });
    let finish = () => undefined as void;
    const out = new Writable({ write: (_chunk, _encoding, callback) => void (finish = callback) });
    const progress = sendProgress(() => handed, stream, out);
    stream.push(Buffer.alloc(10));
    handed = 10;
    // Held in the stream.
    expect(progress.written()).toBe(0);
    out.write(stream.read());
    // Handed over, not yet written.
    expect(progress.written()).toBe(0);
    finish();
    expect(progress.written()).toBe(10);
    expect(() => sendProgress(() => 0, new Readable({ objectMode: true, read: () => undefined }), out)).toThrow(/object stream/);
  });

  describe('a body piped straight into the response, read at every pace', () => {
    let server: http.Server;
    let port = 0;
    const reused: number[] = [];
    beforeAll(async () => {
      server = http.createServer((_req, res) => {
        const pool = new PiecePool(PIECE);
        // Each piece filled with its number: a buffer read into again before it was written shows.
        let handed = 0;
        async function* pieces() {
          for (let i = 0; i < PIECES; i++) {
            await new Promise<void>((resolve) => setImmediate(resolve));
            const piece = pool.take().fill(i & 0xff);
            handed += piece.length;
            yield piece;
          }
          reused.push(pool.reused);
        }
        const body = Readable.from(pieces(), { objectMode: false });
        pool.sendsTo(sendProgress(() => handed, body, res));
        res.writeHead(200, { 'content-length': PIECE * PIECES });
        body.pipe(res);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    /** The body read from the socket, paused now and then for `pauseMs` (0: never), each byte checked against its piece's number. */
    function read(pauseEvery: number, pauseMs: number): Promise<{ bytes: number; wrong: number }> {
      return new Promise((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1');
        socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        let head: Buffer | null = Buffer.alloc(0);
        let [bytes, wrong, reads] = [0, 0, 0];
        socket.on('data', (chunk: Buffer) => {
          let data = chunk;
          if (head) {
            const joined = Buffer.concat([head, chunk]);
            const end = joined.indexOf('\r\n\r\n');
            if (end < 0) return void (head = joined);
            [head, data] = [null, joined.subarray(end + 4)];
          }
          for (let i = 0; i < data.length; i++) if (data[i] !== (Math.floor((bytes + i) / PIECE) & 0xff)) wrong++;
          bytes += data.length;
          if (pauseMs > 0 && ++reads % pauseEvery === 0) {
            socket.pause();
            setTimeout(() => socket.resume(), pauseMs);
          }
        });
        socket.on('error', reject);
        socket.on('close', () => resolve({ bytes, wrong }));
      });
    }

    it('at full speed pieces are read into again, and every byte arrives as it was', async () => {
      const before = reused.length;
      expect(await read(0, 0)).toEqual({ bytes: PIECE * PIECES, wrong: 0 });
      expect(reused.length).toBe(before + 1);
      expect(reused.at(-1)).toBeGreaterThan(0);
    });

    it('read with pauses (the stream and the socket holding pieces back), every byte arrives as it was', async () => {
      for (const [every, ms] of [[1, 1], [3, 2], [7, 1], [20, 5]] as const) expect(await read(every, ms)).toEqual({ bytes: PIECE * PIECES, wrong: 0 });
    });
  });
});
