import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** From the last byte written to the socket's end. */
  ms: number;
}

/**
 * Writes `bytes` as they are on a plain TCP connection (no HTTP client to correct them) and reads
 * until the server closes the connection or `maxMs` passes (status 0 then).
 */
export function rawExchange(url: string, bytes: string | Buffer, maxMs = 10_000): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let sentAt = Date.now();
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(parseAnswer(Buffer.concat(chunks).toString('latin1'), Date.now() - sentAt));
    };
    const timer = setTimeout(finish, maxMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', finish);
    socket.on('error', () => undefined);
    socket.write(bytes, () => (sentAt = Date.now()));
  });
}

/** The last complete response in `text` (an interim 100 Continue is skipped); its body de-chunked and decoded as UTF-8. */
function parseAnswer(text: string, ms: number): RawAnswer {
  const responses = text.split(/(?=HTTP\/1\.1 \d{3} )/).filter((r) => !r.startsWith('HTTP/1.1 100 '));
  const last = responses.at(-1) ?? '';
  const end = last.indexOf('\r\n\r\n');
  if (!last.startsWith('HTTP/1.1 ') || end < 0) return { status: 0, headers: {}, body: '', ms };
  const [statusLine, ...lines] = last.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const raw = last.slice(end + 4);
  const body = headers['transfer-encoding'] === 'chunked' ? dechunk(raw) : raw;
  return { status: Number(statusLine!.split(' ')[1]), headers, body: Buffer.from(body, 'latin1').toString('utf8'), ms };
}

/** A chunked body's data (latin1 text in, latin1 text out); a body cut inside a chunk keeps what arrived. */
function dechunk(text: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const lineEnd = text.indexOf('\r\n', at);
    if (lineEnd < 0) return out;
    const size = parseInt(text.slice(at, lineEnd), 16);
    if (!(size > 0)) return out;
    out += text.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}
