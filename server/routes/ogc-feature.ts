import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import type { AppContext } from '../app-context.ts';
import { collectionNotFound, featureNotFound, fitsColumn, MAX_FEATURE_ID, OGC_ROOT, OgcFeatureQuery, WITH_IDS } from '../ogc/documents.ts';
import { sendShell, wantsHtml } from '../ogc/html.ts';
import { featurePage } from '../ogc/items-page.ts';
import { wholeTime } from '../ogc/items-query.ts';
import { linkBase } from '../http/public-url.ts';
import { invalidParameters, Problem } from '../http/problems.ts';
import { datasetChoices, parameterErrors } from '../params/query-params.ts';
import { serveQuery } from './dataset.ts';


function featureOf(request: FastifyRequest): { d: DatasetDescriptor & { featureId: string }; id: string } {
  const { collectionId, featureId } = request.params as { collectionId: string; featureId: string };
  const d = WITH_IDS.find((x) => x.name === collectionId);
  if (!d) throw collectionNotFound(collectionId, true);
  if (featureId.length > MAX_FEATURE_ID) throw invalidParameters([{ parameter: 'featureId', message: `must be at most ${MAX_FEATURE_ID} characters` }]);
  // A numeric id column holds no feature whose id is not a number: nothing to look for.
  if (!fitsColumn(d, d.featureId!, featureId)) throw featureNotFound(d, 'its ids are whole numbers');
  return { d: d as DatasetDescriptor & { featureId: string }, id: featureId };
}

/** One Feature by its id: the whole collection searched through the v1 pipeline, 404 when no row has it. */
function answerFeature(request: FastifyRequest, reply: FastifyReply, ctx: AppContext) {
  const { d, id } = featureOf(request);
  const raw = request.query as Record<string, unknown>;
  const parsed = OgcFeatureQuery.safeParse(raw);
  if (!parsed.success) throw invalidParameters(parameterErrors(parsed.error, raw, Object.keys(OgcFeatureQuery.shape)));
  if (wantsHtml(request)) return sendShell(reply, `${d.title}: ${id}`, ctx.config.publicUrl);
  const { q } = datasetChoices(d, {}, []);
  q.window = d.time ? wholeTime() : null;
  q.filters.push({ kind: 'equals', column: d.featureId, value: id });
  Object.assign(q.echo, { featureId: id });
  return serveQuery(request, reply, ctx, { d, q, page: featurePage(linkBase(ctx.config.publicUrl, request), d, id) });
}

export function registerOgcFeatureRoute(scope: FastifyInstance, ctx: AppContext): void {
  scope.route({ method: ['GET', 'HEAD'], url: `${OGC_ROOT}/collections/:collectionId/items/:featureId`, config: { htmlShell: true }, handler: (request, reply) => answerFeature(request, reply, ctx) });
}
