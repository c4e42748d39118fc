import http from 'node:http';
import https from 'node:https';
import { HttpStatusError, TransferError } from '../errors.ts';

/** Longer than the server's default query budget (600 s): a slow preflight is not a dead connection. */
const IDLE_TIMEOUT_MS = 11 * 60_000;
const MAX_PROBLEM_BYTES = 64 * 1024;

/**
 * node:http rather than fetch: a body that ends early must be told apart from a complete one
 * (`res.complete`), because the server signals a failed stream only by aborting the socket.
 */
export class HttpClient {
  private readonly agents = { http: new http.Agent({ keepAlive: true, maxSockets: 1 }), https: new https.Agent({ keepAlive: true, maxSockets: 1 }) };

  constructor(
    private readonly key: string,
    private readonly userAgent: string,
  ) {}

  /** GETs `url` (asking for `accept` if given); a 200 body goes to `consume`, any other status becomes an HttpStatusError. */
  get<T>(url: URL, consume: (res: http.IncomingMessage) => Promise<T>, accept?: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const secure = url.protocol === 'https:';
      const headers = { authorization: `Bearer ${this.key}`, 'user-agent': this.userAgent, ...(accept ? { accept } : {}) };
      let responded = false;
      const onResponse = (res: http.IncomingMessage) => {
        responded = true;
        handleResponse(res, consume).then(resolve, reject);
      };
      const req = (secure ? https : http).get(url, { headers, agent: secure ? this.agents.https : this.agents.http }, onResponse);
      req.setTimeout(IDLE_TIMEOUT_MS, () => req.destroy(new TransferError(`no data for ${IDLE_TIMEOUT_MS / 60_000} minutes`)));
      // Once a response is being read, its own stream reports the failure, and only after `consume`
      // has stopped writing: a retry must never overlap the attempt it replaces.
      req.on('error', (e) => {
        if (!responded) reject(e instanceof TransferError ? e : new TransferError(`connection failed: ${errorText(e)}`));
      });
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

async function handleResponse<T>(res: http.IncomingMessage, consume: (res: http.IncomingMessage) => Promise<T>): Promise<T> {
  try {
    if (res.statusCode !== 200) throw await statusError(res);
    const value = await consume(res);
    if (!res.complete) throw new TransferError('the connection ended before the response was complete');
    return value;
  } catch (e) {
    res.destroy();
    throw e;
  }
}

/**
 * The body's chunks. A reset or an early end of the stream surfaces as a TransferError saying how
 * far the body got: node:http raises when the connection closes short of the Content-Length or
 * inside the chunked framing. A body without either ends when the connection does, so a cut there
 * looks like a normal end; only the page readers can tell it (a record, document or file left open).
 */
export async function* bodyChunks(res: http.IncomingMessage): AsyncGenerator<Buffer> {
  let received = 0;
  try {
    for await (const chunk of res) {
      received += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
  } catch (e) {
    throw new TransferError(`the connection broke off after ${framedSoFar(res, received)}: ${errorText(e)}`);
  }
  if (!res.complete) throw new TransferError(`the connection ended after ${framedSoFar(res, received)}, before the response was complete`);
}

const framedSoFar = (res: http.IncomingMessage, received: number): string => {
  const length = res.headers['content-length'];
  if (length !== undefined) return `${received} of the ${length} bytes of its Content-Length`;
  return `${received} bytes${res.headers['transfer-encoding'] === undefined ? '' : ' of a chunked body'}`;
};

/**
 * Whether a body that ended without error is provably the whole answer: node:http ends a body with
 * a Content-Length only after exactly that many bytes. The final chunk of a chunked body proves
 * less: a proxy that reads the upstream answer over HTTP/1.0 (nginx's default) sees a server that
 * died mid-body as one that finished, and ends its own chunked answer cleanly.
 */
export const provenWhole = (res: http.IncomingMessage): boolean => res.complete && res.headers['content-length'] !== undefined;

async function statusError(res: http.IncomingMessage): Promise<HttpStatusError> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res) {
      if (size < MAX_PROBLEM_BYTES) parts.push(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
  } catch {
    // The status and Retry-After are what matter; a lost problem body only costs the detail.
  }
  const status = res.statusCode ?? 0;
  return new HttpStatusError(status, problemDetail(Buffer.concat(parts).toString('utf8'), res.statusMessage ?? ''), parseRetryAfter(res.headers['retry-after']));
}

function problemDetail(body: string, fallback: string): string {
  try {
    const p = JSON.parse(body) as { title?: unknown; detail?: unknown };
    const text = [p.title, p.detail].filter((s) => typeof s === 'string' && s).join(': ');
    return text || fallback;
  } catch {
    return fallback;
  }
}

/** Retry-After is whole seconds in this contract; an HTTP-date is accepted too (RFC 9110). */
export function parseRetryAfter(value: string | undefined): number | null {
  if (value === undefined || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

const errorText = (e: unknown): string => {
  const err = e as { code?: unknown; message?: unknown };
  const message = typeof err.message === 'string' ? err.message : String(e);
  return typeof err.code === 'string' && !message.includes(err.code) ? `${message} (${err.code})` : message;
};
