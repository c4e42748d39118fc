import net from 'node:net';

/** Bytes the socket reads into at a time: one buffer for the whole response. */
const READ_BUFFER_BYTES = 1 << 20;
const CRLFCRLF = Buffer.from('\r\n\r\n');

export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Map<string, string>;
}

export interface RawGetHandlers {
  onHead(head: RawResponse): void;
  /** Body bytes as they arrive, de-chunked: a view of the one read buffer, valid only during the call. */
  onBody(bytes: Buffer): void;
  /** The socket closed: `complete` when the body ended as its framing says (its length, or the last chunk). */
  onClose(complete: boolean): void;
  onError(e: Error): void;
}

export interface RawGet {
  destroy(e?: Error): void;
}

/**
 * A GET over HTTP/1.1 read straight from the socket into one buffer: no object is made per read,
 * where node's HTTP client makes a new buffer of each read (its garbage, hundreds of megabytes a
 * month of GeoJSON, made the bench's own collector take up to 1.3 s of the cores it shares with
 * the server in some runs). Bodies by Content-Length, chunked, or to the end of the connection.
 */
export function rawGet(url: URL, headers: Record<string, string>, h: RawGetHandlers): RawGet {
  const framing = new Framing(h);
  const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  const socket = net.connect({
    host: url.hostname,
    port: Number(url.port || 80),
    onread: {
      buffer,
      callback: (n) => {
        try {
          framing.take(buffer.subarray(0, n));
        } catch (e) {
          socket.destroy(e as Error);
        }
        return true;
      },
    },
  });
  const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  let failed = false;
  socket.on('error', (e) => {
    failed = true;
    h.onError(e);
  });
  socket.on('close', () => h.onClose(!failed && framing.ended));
  return { destroy: (e) => socket.destroy(e) };
}

type State = 'head' | 'size' | 'data' | 'data-end' | 'trailer' | 'length' | 'to-close' | 'ended';

/** A response's framing read from its bytes: the head, then the body handed on de-chunked. */
export class Framing {
  private state: State = 'head';
  private head = Buffer.alloc(0);
  /** The chunk-size line or trailer line read so far. */
  private line = '';
  /** Bytes left of the current chunk (or of the body, by length). */
  private left = 0;

  constructor(private readonly h: Pick<RawGetHandlers, 'onHead' | 'onBody'>) {}

  /** Whether the body reached its end as framed (a body read to the close ends when the socket does). */
  get ended(): boolean {
    return this.state === 'ended' || this.state === 'to-close';
  }

  take(bytes: Buffer): void {
    let at = 0;
    while (at < bytes.length && this.state !== 'ended') at = this.step(bytes, at);
  }

  /** Reads from `at` in the current state; where reading goes on. */
  private step(bytes: Buffer, at: number): number {
    switch (this.state) {
      case 'head':
        return this.readHead(bytes, at);
      case 'length':
      case 'data': {
        const n = Math.min(this.left, bytes.length - at);
        if (n > 0) this.h.onBody(bytes.subarray(at, at + n));
        this.left -= n;
        if (this.left === 0) this.state = this.state === 'length' ? 'ended' : 'data-end';
        return at + n;
      }
      case 'to-close':
        this.h.onBody(bytes.subarray(at));
        return bytes.length;
      case 'data-end':
      case 'size':
      case 'trailer':
        return this.readLine(bytes, at);
      default:
        return bytes.length;
    }
  }

  private readHead(bytes: Buffer, at: number): number {
    const joined = Buffer.concat([this.head, bytes.subarray(at)]);
    const end = joined.indexOf(CRLFCRLF);
    if (end < 0) {
      this.head = joined;
      return bytes.length;
    }
    const [status, ...fields] = joined.subarray(0, end).toString('latin1').split('\r\n');
    const headers = new Map(fields.map((f) => [f.slice(0, f.indexOf(':')).trim().toLowerCase(), f.slice(f.indexOf(':') + 1).trim()] as const));
    this.head = Buffer.alloc(0);
    this.h.onHead({ status: Number(status!.split(' ')[1]), headers });
    const length = headers.get('content-length');
    if (/chunked/i.test(headers.get('transfer-encoding') ?? '')) this.state = 'size';
    else if (length !== undefined) [this.state, this.left] = Number(length) === 0 ? ['ended', 0] : ['length', Number(length)];
    else this.state = 'to-close';
    // What followed the head in this read.
    return bytes.length - (joined.length - end - CRLFCRLF.length);
  }

  /** A line of the chunked framing: a chunk's size, the line end after its data, or a trailer line. */
  private readLine(bytes: Buffer, at: number): number {
    const nl = bytes.indexOf(10, at);
    this.line += bytes.toString('latin1', at, nl < 0 ? bytes.length : nl);
    if (nl < 0) return bytes.length;
    const line = this.line.replace(/\r$/, '');
    this.line = '';
    if (this.state === 'data-end') {
      if (line !== '') throw new Error('a chunk longer than its size');
      this.state = 'size';
    } else if (this.state === 'trailer') {
      if (line === '') this.state = 'ended';
    } else {
      this.left = Number.parseInt(line.split(';')[0]!, 16);
      if (!Number.isFinite(this.left)) throw new Error(`a chunk size that is not one: ${line}`);
      this.state = this.left === 0 ? 'trailer' : 'data';
    }
    return nl + 1;
  }
}
