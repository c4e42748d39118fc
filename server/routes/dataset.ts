import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { FORMATS } from '../../queries/formats.ts';
import type { DataVersion, Extract } from '../../queries/stream/extract-types.ts';
import { prepareExtract } from '../../queries/stream/extract.ts';
import { instantFromDate } from '../../queries/instant.ts';
import type { AppContext } from '../app-context.ts';
import { entityTag, freshness } from '../etag.ts';
import { COLUMNAR_META_KEY } from '../../shared/wire.ts';
import { DATA_VARY } from '../media-types.ts';
import { buildMeta, fileMeta, metaHeaders, type Meta } from '../meta.ts';
import { parseDatasetQuery, type DatasetQuery } from '../query-params.ts';
import { atCapacity, toProblem } from '../problems.ts';
import { requestSignal } from '../request-signal.ts';

async function* framed(prefix: string, rows: AsyncGenerator<string | Buffer>, suffix: string): AsyncGenerator<string | Buffer> {
  yield prefix;
  yield* rows;
  if (suffix) yield suffix;
}

/** Text rows framed by their format; a columnar body carries meta in its own file or stream. */
function responseBody(d: DatasetDescriptor, q: DatasetQuery, meta: Meta, x: Extract): AsyncGenerator<string | Buffer> {
  const body = FORMATS[q.format].body;
  if (body.kind === 'columnar') return x.chunks({ [COLUMNAR_META_KEY]: JSON.stringify(fileMeta(meta)) });
  return framed(body.prefix(d, meta), x.chunks(), body.suffix);
}

/** The chunks of `body`, their bytes added up in `sent` as they are handed on. */
async function* counted(body: AsyncGenerator<string | Buffer>, sent: { bytes: number }): AsyncGenerator<string | Buffer> {
  for await (const chunk of body) {
    sent.bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    yield chunk;
  }
}

/** Headers from meta, then the body streamed; HEAD gets the headers only. */
function sendExtract(request: FastifyRequest, reply: FastifyReply, ctx: AppContext, d: DatasetDescriptor, q: DatasetQuery, x: Extract) {
  const meta = buildMeta(d, q, x, ctx.config.rowLimit);
  reply.headers(metaHeaders(meta)).type(FORMATS[q.format].mediaType);
  ctx.metrics.observeExtract(d.name, x.returned);
  if (request.method === 'HEAD') {
    x.dispose();
    return reply.send();
  }
  const sent = { rows: 0, bytes: 0 };
  const body = Readable.from(counted(responseBody(d, q, meta, x), sent));
  body.once('close', () => x.dispose());
  reply.raw.once('close', () => {
    if (reply.raw.writableFinished) sent.rows = x.returned;
    else ctx.metrics.countAbortedStream();
    ctx.metrics.countSent(d.name, sent);
    x.dispose();
  });
  return reply.send(body);
}

/**
 * Overload: with every connection busy and the queue full, a request that will need a connection
 * is refused before any file is listed or checked, so refusals cost next to nothing and leave
 * the cores to the requests being served. A request that may be answered without one (a 304 over
 * checked files, rows from the cache) still goes through.
 */
function refuseWhenSaturated(request: FastifyRequest, ctx: AppContext): void {
  const engine = ctx.extract.engine;
  if (!engine.saturated || request.headers['if-none-match'] !== undefined || ctx.extract.rowsCache !== null) return;
  throw atCapacity(engine.refuse(), ctx.config.retryAfterSeconds);
}

/** GET /api/v1/<dataset>: validate, preflight (all checks, exact count), then stream. */
export function registerDatasetRoute(app: FastifyInstance, ctx: AppContext, d: DatasetDescriptor): void {
  app.get(`/api/v1/${d.name}`, async (request, reply) => {
    const nowMs = Date.now();
    const q = parseDatasetQuery(d, request.query as Record<string, unknown>, instantFromDate(new Date(nowMs)), request.headers.accept);
    refuseWhenSaturated(request, ctx);
    const fresh = freshness(d, q, request.headers['if-none-match'], ctx.config.rowLimit);
    const req = {
      descriptor: d,
      window: q.window,
      format: q.format,
      filters: q.filters,
      folderValue: q.folderValue,
      params: q.params,
      isFresh: fresh.isFresh,
      cacheKey: (v: DataVersion) => entityTag(d, q, v, ctx.config.rowLimit),
    };
    const { signal, engineWork, preflightDone } = requestSignal(reply, ctx.config);
    const x = await prepareExtract({ ...ctx.extract, nowMs, signal, engineWork, owner: request.keyId ?? '' }, req).catch((e: unknown) => {
      throw toProblem(e, ctx.config.retryAfterSeconds);
    });
    preflightDone();
    reply.header('etag', fresh.etag()).header('vary', DATA_VARY);
    return x === null ? reply.code(304).send() : sendExtract(request, reply, ctx, d, q, x);
  });
}
