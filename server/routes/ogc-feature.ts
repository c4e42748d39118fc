import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import type { AppContext } from '../app-context.ts';
import { MAX_FEATURE_ID, OGC_ROOT, OgcFeatureQuery, WITH_IDS } from '../ogc/documents.ts';
import { requestOrigin, sendShell, wantsHtml } from '../ogc/html.ts';
import { wholeTime } from '../ogc/items-query.ts';
import { invalidParameters, Problem } from '../problems.ts';
import { datasetChoices, parameterErrors } from '../query-params.ts';
import { serveQuery, type PageShape } from './dataset.ts';


function featureOf(request: FastifyRequest): { d: DatasetDescriptor & { featureId: string }; id: string } {
  const { collectionId, featureId } = request.params as { collectionId: string; featureId: string };
  const d = WITH_IDS.find((x) => x.name === collectionId);
  if (!d) throw new Problem('not-found', `No collection '${collectionId.slice(0, 64).replace(/[^\w-]/g, '?')}' with feature ids; they are: ${WITH_IDS.map((x) => x.name).join(', ')}.`);
  if (featureId.length > MAX_FEATURE_ID) throw invalidParameters([{ parameter: 'featureId', message: `must be at most ${MAX_FEATURE_ID} characters` }]);
  // A numeric id column holds no feature whose id is not a number: nothing to look for.
  const type = d.columns.find((c) => c.name === d.featureId)?.type;
  if ((type === 'BIGINT' || type === 'INTEGER') && !/^-?\d{1,18}$/.test(featureId)) throw new Problem('not-found', `No feature with this id in ${d.name}: its ids are whole numbers.`);
  return { d: d as DatasetDescriptor & { featureId: string }, id: featureId };
}

/** One Feature by its id: the whole collection searched through the v1 pipeline, 404 when no row has it. */
function answerFeature(request: FastifyRequest, reply: FastifyReply, ctx: AppContext) {
  const { d, id } = featureOf(request);
  const raw = request.query as Record<string, unknown>;
  const parsed = OgcFeatureQuery.safeParse(raw);
  if (!parsed.success) throw invalidParameters(parameterErrors(parsed.error, raw, Object.keys(OgcFeatureQuery.shape)));
  if (wantsHtml(request)) return sendShell(reply, `${d.title}: ${id}`);
  const { q } = datasetChoices(d, {}, []);
  q.window = d.time ? wholeTime() : null;
  q.filters.push({ kind: 'equals', column: d.featureId, value: id });
  Object.assign(q.echo, { featureId: id });
  const here = `${requestOrigin(request)}${OGC_ROOT}/collections/${d.name}`;
  const self = `${here}/items/${encodeURIComponent(id)}`;
  const page: PageShape = {
    rowLimit: 1,
    keyed: false,
    mediaType: 'application/geo+json',
    framing: () => ({ prefix: '', suffix: '\n' }),
    headers: () => ({ link: `<${self}>; rel="self"; type="application/geo+json", <${self}?f=html>; rel="alternate"; type="text/html", <${here}>; rel="collection"; type="application/json"` }),
    refuse: (x) => (x.returned === 0 ? new Problem('not-found', `No feature with this id in ${d.name}.`) : null),
  };
  return serveQuery(request, reply, ctx, { d, q, page });
}

export function registerOgcFeatureRoute(scope: FastifyInstance, ctx: AppContext): void {
  scope.route({ method: ['GET', 'HEAD'], url: `${OGC_ROOT}/collections/:collectionId/items/:featureId`, config: { htmlShell: true }, handler: (request, reply) => answerFeature(request, reply, ctx) });
}
