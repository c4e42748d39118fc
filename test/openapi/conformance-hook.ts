import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ContractChecker, type SentResponse } from './contract-checker.ts';

/** Bodies larger than this are not buffered for checking; the check then fails rather than pass unseen. */
const MAX_CHECKED_BYTES = 64 * 1024 * 1024;

export interface Conformance {
  /** What did not match the served document, one line per finding. */
  readonly violations: string[];
  /** How many responses were checked so far. */
  readonly checked: () => number;
  /** Throws listing every violation, if there was any. */
  assertClean(): void;
}

const captured = (contentType: string): 'all' | 'first-line' | null =>
  /json/.test(contentType) ? 'all' : contentType.startsWith('text/csv') ? 'first-line' : null;

/** The body as sent before its content coding (the document describes decoded bodies). */
function decoded(body: Buffer, coding: string): Buffer {
  if (coding === 'gzip') return gunzipSync(body);
  if (coding === 'br') return brotliDecompressSync(body);
  return body;
}

/**
 * Keeps a copy of a streamed body (CSV: its header row only) as the response writes it, and
 * reports it once the response has finished with the whole stream. The stream itself is left as it
 * is: no stream comes between it and the response (the server reads large bodies into buffers it
 * uses again once the response has written them, only when piped straight into it), and the copy
 * is taken as each chunk is written, before it can be. A stream that failed or was cut is never
 * reported: it was not a response (one that failed before its first byte is answered by an error,
 * which comes through onSend again and is checked there).
 */
function tap(res: ServerResponse, stream: Readable, mode: 'all' | 'first-line', coding: string, report: (body: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  const keep = (chunk: unknown, encoding: unknown) => {
    if (done || chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const copy = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk as Uint8Array);
    chunks.push(copy);
    size += copy.length;
    // A coded body's first line is known only once it is decoded.
    done = (mode === 'first-line' && !coding && copy.includes(10)) || size > MAX_CHECKED_BYTES;
  };
  const [write, end] = [res.write, res.end];
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    keep(chunk, rest[0]);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as ServerResponse['write'];
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    keep(chunk, rest[0]);
    return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
  } as ServerResponse['end'];
  res.once('finish', () => {
    if (!stream.readableEnded) return;
    if (size > MAX_CHECKED_BYTES && (mode === 'all' || coding)) report('<body too large for the conformance check>');
    else report(decoded(Buffer.concat(chunks), coding).toString('utf8'));
  });
}

/** A schema Ajv cannot compile is a finding about the document; it must not turn the response into a 500. */
function safeCheck(checker: ContractChecker, sent: SentResponse): string[] {
  try {
    return checker.check(sent);
  } catch (e) {
    return [`${sent.method} ${sent.route}: the documented schema cannot be checked: ${(e as Error).message}`];
  }
}

/**
 * One checker per document text, for every app of the process that serves it: dereferencing the
 * document and compiling its schemas (each once, when first used) cost more than starting an app.
 * A checker keeps nothing of the responses it checked.
 */
const checkers = new Map<string, Promise<ContractChecker>>();
function checkerFor(document: string): Promise<ContractChecker> {
  let checker = checkers.get(document);
  if (!checker) checkers.set(document, (checker = ContractChecker.create(JSON.parse(document))));
  return checker;
}

/**
 * Checks every response `app` sends against the OpenAPI document the app itself serves at
 * /api/v1/docs: an undocumented route, status, header, field or CSV column is a violation.
 * Call before the app is ready (hooks cannot be added later); it then fetches the document.
 */
export async function checkConformance(app: FastifyInstance): Promise<Conformance> {
  const violations: string[] = [];
  let checked = 0;
  let checker: ContractChecker | null = null;
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (!checker) return payload;
    const c = checker;
    const sent = (body: string | null): SentResponse => ({ method: request.method, route: request.routeOptions.url, status: reply.statusCode, headers: reply.getHeaders(), body });
    const report = (body: string | null) => {
      checked += 1;
      violations.push(...safeCheck(c, sent(body)).map((v) => `${v} (${request.url})`));
    };
    const mode = captured(String(reply.getHeader('content-type') ?? ''));
    const coding = String(reply.getHeader('content-encoding') ?? '');
    // Fastify streams any payload with a pipe() method; so does the check.
    if (typeof (payload as Readable | null)?.pipe === 'function') {
      if (mode && request.method !== 'HEAD') tap(reply.raw, payload as Readable, mode, coding, report);
      else report(null);
    } else if (Buffer.isBuffer(payload) && coding) report(decoded(payload, coding).toString('utf8'));
    else report(payload === undefined || payload === null ? null : String(payload));
    return payload;
  });
  const served = await app.inject({ method: 'GET', url: '/api/v1/docs' });
  checker = await checkerFor(served.body);
  return {
    violations,
    checked: () => checked,
    assertClean() {
      if (violations.length) throw new Error(`responses that do not match the OpenAPI document:\n${[...new Set(violations)].join('\n')}`);
    },
  };
}
