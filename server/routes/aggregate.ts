import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { FORMATS, type FormatRules } from '../../queries/formats.ts';
import { instantFromDate } from '../../queries/instant.ts';
import { prepareAggregate, type Aggregate } from '../../queries/stream/aggregate.ts';
import type { DataVersion } from '../../queries/stream/extract-types.ts';
import { aggregateBody } from '../../queries/stream/aggregate-text.ts';
import type { AppContext } from '../app-context.ts';
import { parseAggregateQuery } from '../aggregate-params.ts';
import { keyedOnly } from '../auth.ts';
import { refuseWhenSaturated } from '../capacity.ts';
import { encodeWhole, negotiateEncoding, type Encoding } from '../compression.ts';
import { entityTag, freshness } from '../etag.ts';
import { DATA_VARY } from '../media-types.ts';
import { buildMeta, fileMeta, metaHeaders, type Meta } from '../meta.ts';
import { COLUMNAR_META_KEY } from '../../shared/wire.ts';
import { toProblem } from '../problems.ts';
import type { DatasetQuery } from '../query-params.ts';
import { requestSignal } from '../request-signal.ts';

/** GET /api/v1/<dataset>/aggregate: validated as the dataset's endpoint, preflighted as an extract, answered whole with its length. */
export function registerAggregateRoute(app: FastifyInstance, ctx: AppContext, d: DatasetDescriptor): void {
  app.route({ method: ['GET', 'HEAD'], url: `/api/v1/${d.name}/aggregate`, handler: (request, reply) => answerAggregate(request, reply, ctx, d) });
}

async function answerAggregate(request: FastifyRequest, reply: FastifyReply, ctx: AppContext, d: DatasetDescriptor) {
  keyedOnly(request);
  const { q, shape } = parseAggregateQuery(d, request.query as Record<string, unknown>, instantFromDate(new Date()), request.headers.accept);
  refuseWhenSaturated(request, ctx);
  const rowLimit = ctx.config.aggregateRowLimit;
  const encoding = ctx.config.compressResponses && FORMATS[q.format].compress ? negotiateEncoding(request.headers['accept-encoding']) : 'identity';
  const fresh = freshness(d, q, request.headers['if-none-match'], rowLimit, encoding);
  const { signal, engineWork, preflightDone } = requestSignal(reply, ctx.config);
  const run = { ...ctx.extract, rowLimit, nowMs: Date.now(), signal, engineWork, owner: request.keyId ?? '' };
  const fileMetadata = (x: Omit<Aggregate, 'file'>) => columnarMetadata(buildMeta(d, q, { ...x, returned: x.rows.length }, rowLimit));
  const req = { descriptor: d, window: q.window!, format: q.format, filters: q.filters, folderValue: q.folderValue, params: q.params, isFresh: fresh.isFresh, cacheKey: (v: DataVersion) => entityTag(d, q, v, rowLimit), shape, rowLimit, fileMetadata };
  const a = await prepareAggregate(run, req).catch((e: unknown) => {
    throw toProblem(e, ctx.config.retryAfterSeconds);
  });
  preflightDone();
  reply.header('etag', fresh.etag()).header('vary', DATA_VARY);
  if (a === null) return reply.code(304).send();
  return sendAggregate(request, reply, { d, q, a, rowLimit, encoding });
}

/** The meta block a columnar file carries, as for the data endpoints. */
const columnarMetadata = (meta: Meta): Record<string, string> => ({ [COLUMNAR_META_KEY]: JSON.stringify(fileMeta(meta)) });

/** The body before any content coding: text framed by meta, a file with meta inside, or the Parquet file DuckDB wrote. */
function written(writer: NonNullable<FormatRules['aggregate']>, meta: Meta, a: Aggregate): Buffer {
  if (writer.kind === 'text') return Buffer.from(aggregateBody(writer, meta, a.columns, a.rows));
  if (writer.kind === 'binary') return Buffer.from(writer.write(columnarMetadata(meta), a.columns, a.rows));
  if (!a.file) throw new Error('a Parquet aggregate without its file');
  return a.file;
}

async function* once(body: Buffer): AsyncGenerator<Buffer> {
  yield body;
}

/** The groups as one body in the format's text (meta framing it) or file (meta inside) and the client's coding, sent with its length; meta also in the X- headers. */
async function sendAggregate(request: FastifyRequest, reply: FastifyReply, r: { d: DatasetDescriptor; q: DatasetQuery; a: Aggregate; rowLimit: number; encoding: Encoding }) {
  const { q, a, encoding } = r;
  const meta = buildMeta(r.d, q, { ...a, returned: a.rows.length }, r.rowLimit);
  const whole = written(FORMATS[q.format].aggregate!, meta, a);
  const body = encoding === 'identity' ? whole : await encodeWhole(once(whole), encoding);
  reply.headers(metaHeaders(meta)).type(FORMATS[q.format].mediaType).header('content-length', body.length);
  if (encoding !== 'identity') reply.header('content-encoding', encoding);
  return reply.send(request.method === 'HEAD' ? undefined : body);
}
