import http from 'node:http';
import net from 'node:net';

/** One answer of the real server, read whole by the proxy. */
export interface Upstream {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * How the proxy sends one answer on. `keep` bytes of the body go out (all when absent), framed as:
 * - `close`: HTTP/1.0, `Connection: close`, neither length nor chunks; the socket is closed after
 *   the bytes kept, which the client cannot tell from the end of the body;
 * - `length`: `Content-Length` of the whole body, then the connection drops after the bytes kept;
 * - `chunked`: one chunk announcing the whole body, dropped after the bytes kept; with `clean`, a
 *   chunk of exactly the bytes kept and the final chunk, as a proxy that read a cut upstream over
 *   HTTP/1.0 (nginx's default) sends it: a cut that looks like a complete answer.
 */
export interface Framing {
  framing: 'close' | 'length' | 'chunked';
  keep?: number;
  clean?: boolean;
  /** Headers to set (or replace) on the answer. */
  headers?: Record<string, string>;
}

export interface FramingProxy {
  url: string;
  /** Requests answered so far. */
  readonly requests: number;
  close(): Promise<void>;
}

/** Hop-by-hop headers: the proxy frames the body itself. */
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);

/**
 * A proxy on a plain TCP socket in front of the real server: every request goes upstream, its answer
 * is read whole and written back byte by byte as `frame(n, answer)` says (answer `n`, from 1;
 * null: chunked and whole). It speaks just enough HTTP/1.1 for GETs on a keep-alive connection.
 */
export async function startFramingProxy(upstream: string, frame: (n: number, answer: Upstream) => Framing | null): Promise<FramingProxy> {
  let requests = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let pending = Buffer.alloc(0);
    let busy = Promise.resolve();
    socket.on('data', (data: Buffer) => {
      pending = Buffer.concat([pending, data]);
      for (let end = pending.indexOf('\r\n\r\n'); end >= 0; end = pending.indexOf('\r\n\r\n')) {
        const head = pending.subarray(0, end).toString('latin1');
        pending = pending.subarray(end + 4);
        busy = busy.then(async () => {
          const answer = await fetchUpstream(upstream, head);
          if (!socket.destroyed) send(socket, answer, frame(++requests, answer));
        });
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

function fetchUpstream(upstream: string, head: string): Promise<Upstream> {
  const [requestLine, ...lines] = head.split('\r\n');
  const target = requestLine!.split(' ')[1]!;
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]).filter(([k]) => !HOP.has(k!) && k !== 'host'));
  return new Promise((resolve, reject) => {
    http.get(`${upstream}${target}`, { headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const kept = Object.entries(res.headers).filter(([k, v]) => !HOP.has(k) && typeof v === 'string') as [string, string][];
        resolve({ status: res.statusCode ?? 0, headers: Object.fromEntries(kept), body: Buffer.concat(parts) });
      });
      res.on('error', reject);
    }).on('error', reject);
  });
}

function send(socket: net.Socket, answer: Upstream, how: Framing | null): void {
  const f = how ?? { framing: 'chunked', clean: true };
  const body = answer.body;
  const kept = body.subarray(0, f.keep ?? body.length);
  const headers = { ...answer.headers, ...f.headers };
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  const reason = http.STATUS_CODES[answer.status] ?? 'Status';
  if (f.framing === 'close') {
    socket.end(Buffer.concat([Buffer.from(`HTTP/1.0 ${answer.status} ${reason}\r\n${lines.join('')}connection: close\r\n\r\n`), kept]));
    return;
  }
  const framing = f.framing === 'length' ? `content-length: ${body.length}` : 'transfer-encoding: chunked';
  const start = Buffer.from(`HTTP/1.1 ${answer.status} ${reason}\r\n${lines.join('')}${framing}\r\n\r\n`);
  // A connection dropped after the bytes kept ends with a FIN, as when the process behind it is killed.
  if (f.framing === 'length') {
    const bytes = Buffer.concat([start, kept]);
    return void (kept.length < body.length ? socket.end(bytes) : socket.write(bytes));
  }
  if (f.clean) {
    const chunk = kept.length > 0 ? [Buffer.from(`${kept.length.toString(16)}\r\n`), kept, Buffer.from('\r\n')] : [];
    return void socket.write(Buffer.concat([start, ...chunk, Buffer.from('0\r\n\r\n')]));
  }
  socket.end(Buffer.concat([start, Buffer.from(`${body.length.toString(16)}\r\n`), kept]));
}
