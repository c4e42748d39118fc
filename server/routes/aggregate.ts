import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { FORMATS } from '../../queries/formats.ts';
import { instantFromDate } from '../../queries/instant.ts';
import { prepareAggregate, type Aggregate } from '../../queries/aggregate/aggregate.ts';
import type { DataVersion } from '../../queries/sources/context.ts';
import { aggregateBody } from '../../queries/aggregate/write/aggregate-text.ts';
import { AGGREGATE_WRITERS, type AggregateWriter } from '../../queries/aggregate/write/aggregate-writers.ts';
import { hasGroupGeometry } from '../../queries/aggregate/write/aggregate-geometry.ts';
import { spoolBody } from '../../queries/encode/spool.ts';
import type { AppContext } from '../app-context.ts';
import { parseAggregateQuery } from '../params/aggregate-params.ts';
import { keyedOnly } from '../access/auth.ts';
import { refuseWhenSaturated } from '../access/capacity.ts';
import { encodeBody, encodeWhole, negotiateEncoding, type Encoding } from '../http/compression.ts';
import { entityTag, freshness } from '../etag.ts';
import { DATA_VARY } from '../http/media-types.ts';
import { buildMeta, fileMeta, metaHeaders, type Meta } from '../meta.ts';
import { COLUMNAR_META_KEY } from '../../shared/wire.ts';
import { toProblem } from '../http/problems.ts';
import type { DatasetQuery } from '../params/query-params.ts';
import { requestSignal } from '../http/request-signal.ts';
import { seesBrokenTransfers } from './dataset.ts';

/** GET /api/v1/<dataset>/aggregate: validated as the dataset's endpoint, preflighted as an extract, its groups written as they are sent. */
export function registerAggregateRoute(app: FastifyInstance, ctx: AppContext, d: DatasetDescriptor): void {
  app.route({ method: ['GET', 'HEAD'], url: `/api/v1/${d.name}/aggregate`, handler: (request, reply) => answerAggregate(request, reply, ctx, d) });
}

async function answerAggregate(request: FastifyRequest, reply: FastifyReply, ctx: AppContext, d: DatasetDescriptor) {
  keyedOnly(request);
  const { q, shape } = parseAggregateQuery(d, request.query as Record<string, unknown>, instantFromDate(new Date()), request.headers.accept);
  refuseWhenSaturated(request, ctx, ctx.extract.aggregateCache != null);
  const rowLimit = ctx.config.aggregateRowLimit;
  const encoding = ctx.config.compressResponses && FORMATS[q.format].compress ? negotiateEncoding(request.headers['accept-encoding']) : 'identity';
  const fresh = freshness(d, q, request.headers['if-none-match'], rowLimit, encoding);
  const { signal, engineWork, preflightDone } = requestSignal(reply, ctx.config);
  const run = { ...ctx.extract, rowLimit, nowMs: Date.now(), signal, engineWork, owner: request.keyId ?? '' };
  const fileMetadata = (x: Omit<Aggregate, 'file'>) => columnarMetadata(buildMeta(d, q, { ...x, ...x.groups }, rowLimit));
  const req = { descriptor: d, window: q.window!, format: q.format, filters: q.filters, folderValue: q.folderValue, params: q.params, isFresh: fresh.isFresh, cacheKey: (v: DataVersion) => entityTag(d, q, v, rowLimit), shape, rowLimit, fileMetadata };
  const a = await prepareAggregate(run, req).catch((e: unknown) => {
    throw toProblem(e, ctx.config.retryAfterSeconds);
  });
  preflightDone();
  reply.header('etag', fresh.etag()).header('vary', DATA_VARY);
  if (a === null) return reply.code(304).send();
  // Spooled groups the body never reads (HEAD, a body that fails first) go when the response closes.
  reply.raw.once('close', () => a.groups.release?.());
  return sendAggregate(request, reply, ctx, { d, q, a, rowLimit, encoding, signal, geometry: hasGroupGeometry(shape) });
}

/** The meta block a columnar file carries, as for the data endpoints. */
const columnarMetadata = (meta: Meta): Record<string, string> => ({ [COLUMNAR_META_KEY]: JSON.stringify(fileMeta(meta)) });

/** The body before any content coding, a batch of groups at a time: text framed by meta, a stream with meta inside, or the Parquet file DuckDB wrote. */
function* written(writer: AggregateWriter, meta: Meta, a: Aggregate, geometry: boolean): Generator<string | Buffer> {
  if (writer.kind === 'text') return yield* aggregateBody(writer, meta, a.columns, a.groups);
  if (writer.kind === 'binary') {
    for (const part of writer.write(columnarMetadata(meta), a.columns, a.groups, geometry)) yield Buffer.from(part.buffer, part.byteOffset, part.byteLength);
    return;
  }
  if (!a.file) throw new Error('a Parquet aggregate without its file');
  yield a.file;
}

/** Bytes (about: a text's length) written between turns of the event loop. */
const TURN_BYTES = 1 << 20;

/**
 * The body with a turn of the event loop every TURN_BYTES. While the socket takes every write at
 * once (a client reading as fast as it is written), each write's completion, the next read and
 * the next group run as microtasks: without a turn no timer, no other request's I/O and none of
 * the engine's callbacks would run until the whole body (hundreds of MB for a year of hours by
 * station) was written.
 */
async function* paced(body: Iterable<string | Buffer>): AsyncGenerator<string | Buffer> {
  let since = 0;
  for (const part of body) {
    yield part;
    since += part.length;
    if (since < TURN_BYTES) continue;
    since = 0;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** The body's length, written and counted without being held, the event loop turning as it is written (a spooled answer's is hundreds of MB). */
async function lengthOf(body: AsyncIterable<string | Buffer>): Promise<number> {
  let bytes = 0;
  for await (const part of body) bytes += typeof part === 'string' ? Buffer.byteLength(part) : part.length;
  return bytes;
}

/**
 * Headers from meta, then the groups in the format (meta framing text, inside a file) and the
 * client's coding, written a batch at a time as they are sent: chunked, so a body that fails
 * mid-way is cut, never ended short. A Parquet file is sent whole with its length; a body for a
 * reader that could not see a cut (HTTP/1.0) is spooled to a temp file first and sent with its
 * length, as extracts are. HEAD: the length of an uncoded body, counted.
 */
async function sendAggregate(request: FastifyRequest, reply: FastifyReply, ctx: AppContext, r: { d: DatasetDescriptor; q: DatasetQuery; a: Aggregate; rowLimit: number; encoding: Encoding; signal: AbortSignal; geometry: boolean }) {
  const { q, a, encoding } = r;
  const meta = buildMeta(r.d, q, { ...a, ...a.groups }, r.rowLimit);
  const body = () => written(AGGREGATE_WRITERS[q.format], meta, a, r.geometry);
  // The 200's headers go on only once its body can be sent: a body spooled in vain is a 503 without them.
  const head = () => {
    reply.headers(metaHeaders(meta)).type(FORMATS[q.format].mediaType);
    return encoding === 'identity' ? reply : reply.header('content-encoding', encoding);
  };
  if (request.method === 'HEAD') {
    // Counted before any header is set: a count that fails is a problem without them.
    const length = encoding === 'identity' ? await lengthOf(paced(body())) : null;
    return (length === null ? head() : head().header('content-length', length)).send();
  }
  if (a.file) {
    const whole = encoding === 'identity' ? a.file : await encodeWhole(paced(body()), encoding);
    return head().header('content-length', whole.length).send(whole);
  }
  if (!seesBrokenTransfers(request)) return sendSpooled(reply, ctx, encodeBody(paced(body()), encoding), r.signal, head);
  return sendStreamed(head(), body(), encoding, () => ctx.metrics.countAbortedStream());
}

/** The whole body written to TEMP_DIR (within its budget: a 503 when full), then headed and sent from there with its length; the file goes when the response closes. */
async function sendSpooled(reply: FastifyReply, ctx: AppContext, body: AsyncIterable<string | Buffer>, signal: AbortSignal, head: () => FastifyReply) {
  const spooled = await spoolBody(body, { tempDir: ctx.extract.tempDir, budget: ctx.extract.tempBudget, signal }).catch((e: unknown) => {
    throw toProblem(e, ctx.config.retryAfterSeconds);
  });
  const file = createReadStream(spooled.path, { highWaterMark: 1 << 18 });
  file.once('close', () => void spooled.dispose());
  reply.raw.once('close', () => void spooled.dispose());
  return head().header('content-length', spooled.bytes).send(file);
}

/**
 * Sends `body` in `encoding` as it is read, chunked, buffering a chunk or so ahead of the client.
 * A body that throws after the first byte destroys the socket: the reader sees a cut transfer
 * (no last chunk), never a clean end; `aborted` is told of every transfer that did not finish.
 */
export function sendStreamed(reply: FastifyReply, body: Iterable<string | Buffer>, encoding: Encoding, aborted: () => void) {
  reply.raw.once('close', () => reply.raw.writableFinished || aborted());
  return reply.send(Readable.from(encodeBody(paced(body), encoding), { objectMode: false }));
}
