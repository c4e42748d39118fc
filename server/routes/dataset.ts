import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { FORMATS } from '../../queries/formats.ts';
import type { DataVersion, Extract } from '../../queries/sources/context.ts';
import { prepareExtract } from '../../queries/extract/extract.ts';
import { sendProgress } from '../../queries/engine/piece-pool.ts';
import { mayBeRendered } from '../../queries/renderings/rendered.ts';
import { spoolBody } from '../../queries/encode/spool.ts';
import { floorToSecond, instantFromDate, type Instant } from '../../queries/instant.ts';
import type { AppContext } from '../app-context.ts';
import { keyedOnly } from '../access/auth.ts';
import { encodeBody, encodeWhole, negotiateEncoding, type Encoding } from '../http/compression.ts';
import { entityTag, freshness } from '../etag.ts';
import { COLUMNAR_META_KEY } from '../../shared/wire.ts';
import { DATA_VARY } from '../http/media-types.ts';
import { buildMeta, fileMeta, metaHeaders, type Meta } from '../meta.ts';
import type { PageShape } from '../params/page-shape.ts';
import { parseDatasetQuery, type DatasetQuery } from '../params/query-params.ts';
import { toProblem } from '../http/problems.ts';
import { refuseWhenSaturated } from '../access/capacity.ts';
import { requestSignal } from '../http/request-signal.ts';

async function* framed(prefix: string, rows: AsyncGenerator<string | Buffer>, suffix: string): AsyncGenerator<string | Buffer> {
  yield prefix;
  yield* rows;
  if (suffix) yield suffix;
}

/** The chunks of `body`, their bytes added up in `sent` as they are handed on. */
async function* counted(body: AsyncIterable<string | Buffer> | Iterable<Buffer>, sent: { bytes: number }): AsyncGenerator<string | Buffer> {
  for await (const chunk of body) {
    sent.bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    yield chunk;
  }
}

/** What goes around the rows: text framing from meta, or nothing (a columnar body carries meta in its own file or stream). */
function framingOf(d: DatasetDescriptor, q: DatasetQuery, meta: Meta): { prefix: string; suffix: string } | null {
  const body = FORMATS[q.format].body;
  return body.kind === 'text' ? { prefix: body.prefix(d, meta), suffix: body.suffix } : null;
}

/** The body's length when it is known before the first byte: text rows written or held whole. */
function knownLength(framing: { prefix: string; suffix: string } | null, x: Extract): number | null {
  if (!framing || x.bytes === null) return null;
  return Buffer.byteLength(framing.prefix) + x.bytes + Buffer.byteLength(framing.suffix);
}

/**
 * Only HTTP/1.1 and later frame a body of unknown length so that a cut shows: an HTTP/1.0 reader
 * (and every proxy speaking HTTP/1.0 to us, nginx's default) takes a closed connection for an end.
 */
export const seesBrokenTransfers = (request: FastifyRequest) => request.raw.httpVersionMajor > 1 || request.raw.httpVersionMinor >= 1;

/**
 * Headers from meta, then the body (in the client's coding): with Content-Length whenever it is
 * known before the first byte, and always for a reader that could not see a cut otherwise (the
 * body is then written whole before it is sent). A compressed body's length is known only once it
 * is compressed: a body of known length up to COMPRESS_WHOLE_MAX_MB (compressWholeMaxBytes) is
 * compressed in memory, a larger one (a large window from renderings) or a streamed one goes
 * chunked, compressed as it is sent (or is spooled for HTTP/1.0). HEAD gets the headers only,
 * without a compressed body's length.
 */
async function sendExtract(request: FastifyRequest, reply: FastifyReply, ctx: AppContext, r: { d: DatasetDescriptor; q: DatasetQuery; x: Extract; signal: AbortSignal; encoding: Encoding; page: PageShape | null; readAt: Instant }) {
  const { d, q, x, encoding, page } = r;
  const meta = buildMeta(d, q, x, page?.rowLimit ?? ctx.config.rowLimit);
  const framing = page ? page.framing(x, r.readAt) : framingOf(d, q, meta);
  const known = knownLength(framing, x);
  const head = (length: number | null) => {
    reply.headers(metaHeaders(meta)).headers(page?.headers(x) ?? {}).type(page?.mediaType ?? FORMATS[q.format].mediaType);
    if (encoding !== 'identity') reply.header('content-encoding', encoding);
    if (length !== null) reply.header('content-length', length);
    ctx.metrics.observeExtract(d.name, x.returned, x.way);
  };
  if (request.method === 'HEAD') {
    x.dispose();
    head(encoding === 'identity' ? known : null);
    return reply.send();
  }
  const rows = framing ? framed(framing.prefix, x.chunks(), framing.suffix) : x.chunks({ [COLUMNAR_META_KEY]: JSON.stringify(fileMeta(meta)) });
  if (encoding !== 'identity' && known !== null && known <= ctx.config.compressWholeMaxBytes) {
    const whole = await encodeWhole(rows, encoding).catch((e: unknown) => {
      throw toProblem(e, ctx.config.retryAfterSeconds);
    }).finally(() => x.dispose());
    head(whole.length);
    return sendBody(reply, ctx, d, x, [whole], () => undefined);
  }
  const body = encodeBody(rows, encoding);
  const length = encoding === 'identity' ? known : null;
  if (length !== null || seesBrokenTransfers(request)) {
    head(length);
    return sendBody(reply, ctx, d, x, body, () => x.dispose(), encoding === 'identity');
  }
  const spooled = await spoolBody(body, { tempDir: ctx.extract.tempDir, budget: ctx.extract.tempBudget, signal: r.signal }).catch((e: unknown) => {
    throw toProblem(e, ctx.config.retryAfterSeconds);
  }).finally(() => x.dispose());
  head(spooled.bytes);
  return sendBody(reply, ctx, d, x, createReadStream(spooled.path, { highWaterMark: 1 << 18 }), () => void spooled.dispose());
}

/**
 * Streams `chunks` as the body, counting the bytes sent (as coded on the wire); `cleanup` runs once
 * the response closes, however it closes. `direct`: the chunks are the extract's own, written to
 * the socket as they are (no coding between): once the response is piped from the stream itself,
 * the bytes neither left in the stream nor waiting to be written to the socket have been written
 * (see Extract.sendsTo).
 */
function sendBody(reply: FastifyReply, ctx: AppContext, d: DatasetDescriptor, x: Extract, chunks: AsyncIterable<string | Buffer> | Iterable<Buffer>, cleanup: () => void, direct = false) {
  const sent = { rows: 0, bytes: 0 };
  // A stream of bytes where the extract's own buffers go through (read ahead as far as one of objects: one chunk).
  const body = Readable.from(counted(chunks, sent), direct ? { objectMode: false } : {});
  // Only when the response is piped from `body` itself (no hook has put a stream between that may hold chunks).
  if (direct && x.sendsTo) reply.raw.once('pipe', (source) => source === body && x.sendsTo?.(sendProgress(() => sent.bytes, body, reply.raw)));
  body.once('close', cleanup);
  reply.raw.once('close', () => {
    if (reply.raw.writableFinished) sent.rows = x.returned;
    else ctx.metrics.countAbortedStream();
    ctx.metrics.countSent(d.name, sent);
    cleanup();
  });
  return reply.send(body);
}

/** The extract's text read whole (at most one row) and rewritten; a failure to read it is still a problem response. */
async function rewritten(x: Extract, rewrite: (text: string) => string, retryAfterSeconds: number): Promise<Extract> {
  const parts: Buffer[] = [];
  try {
    for await (const chunk of x.chunks()) parts.push(Buffer.from(chunk));
  } catch (e) {
    throw toProblem(e, retryAfterSeconds);
  } finally {
    x.dispose();
  }
  const body = Buffer.from(rewrite(Buffer.concat(parts).toString('utf8')));
  return { ...x, bytes: body.length, chunks: async function* () { yield body; }, dispose: () => undefined };
}

/**
 * GET /api/v1/<dataset>: validate, preflight (all checks, exact count), then stream. HEAD is
 * declared with it: the HEAD route Fastify would add says Content-Length: 0 for every answer.
 */
export function registerDatasetRoute(app: FastifyInstance, ctx: AppContext, d: DatasetDescriptor): void {
  app.route({ method: ['GET', 'HEAD'], url: `/api/v1/${d.name}`, handler: (request, reply) => answerDataset(request, reply, ctx, d) });
}

function answerDataset(request: FastifyRequest, reply: FastifyReply, ctx: AppContext, d: DatasetDescriptor) {
  const q = parseDatasetQuery(d, request.query as Record<string, unknown>, instantFromDate(new Date()), request.headers.accept);
  return serveQuery(request, reply, ctx, { d, q, page: null });
}

/** A validated query answered: preflight (every check, exact count), then the rows in the page's or the format's framing. */
export async function serveQuery(request: FastifyRequest, reply: FastifyReply, ctx: AppContext, r: { d: DatasetDescriptor; q: DatasetQuery; page: PageShape | null }) {
  const { d, q, page } = r;
  keyedOnly(request);
  const nowMs = Date.now();
  const rowLimit = page?.rowLimit ?? ctx.config.rowLimit;
  // Past capacity, only a request the rows cache or the renderings may answer goes on to look.
  refuseWhenSaturated(request, ctx, ctx.extract.rowsCache !== null || (ctx.extract.renderings != null && mayBeRendered(d, q.format)));
  const encoding = ctx.config.compressResponses && FORMATS[q.format].compress ? negotiateEncoding(request.headers['accept-encoding']) : 'identity';
  const fresh = freshness(d, q, request.headers['if-none-match'], rowLimit, encoding);
  const req = {
    descriptor: d,
    window: q.window,
    format: q.format,
    filters: q.filters,
    folderValue: q.folderValue,
    params: q.params,
    isFresh: fresh.isFresh,
    cacheKey: (v: DataVersion) => entityTag(d, q, v, rowLimit),
    keyed: page?.keyed === true,
  };
  const { signal, engineWork, preflightDone } = requestSignal(reply, ctx.config);
  const x = await prepareExtract({ ...ctx.extract, rowLimit, nowMs, signal, engineWork, owner: request.keyId ?? '' }, req).catch((e: unknown) => {
    throw toProblem(e, ctx.config.retryAfterSeconds);
  });
  preflightDone();
  const readAt = floorToSecond(instantFromDate(new Date()));
  reply.header('etag', fresh.etag()).header('vary', DATA_VARY);
  if (x === null) return reply.code(304).send();
  const refused = page?.refuse?.(x);
  if (refused) {
    x.dispose();
    // The refusal is not a representation: no tag a later If-None-Match could turn into a 304.
    reply.removeHeader('etag');
    throw refused;
  }
  const sent = page?.rewrite ? await rewritten(x, page.rewrite, ctx.config.retryAfterSeconds) : x;
  return sendExtract(request, reply, ctx, { d, q, x: sent, signal, encoding, page, readAt });
}
