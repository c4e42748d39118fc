import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DATASETS, type DatasetDescriptor } from '../../datasets/index.ts';
import { partitionSpan } from '../../queries/files/partitions.ts';
import type { AppContext } from '../app-context.ts';
import { API_TITLE } from '../openapi/document.ts';
import { collection, conformance, landingPage, OGC_ROOT, queryables, type Span } from '../ogc/documents.ts';
import { itemsPage } from '../ogc/items-page.ts';
import { parseItemsQuery } from '../ogc/items-query.ts';
import { Problem } from '../problems.ts';
import { serveQuery } from './dataset.ts';

/** The request's own origin: the Host it was sent to (X-Forwarded-Proto/Host only with TRUST_PROXY). */
const origin = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

const DESCRIPTION = 'Fire data (satellite active-fire detections, burnt areas, fire danger, ground sensors) as OGC API – Features: one collection per dataset, GeoJSON pages walked by their next links.';

function datasetOf(request: FastifyRequest): DatasetDescriptor {
  const id = (request.params as { collectionId: string }).collectionId;
  const d = DATASETS.find((x) => x.name === id);
  if (!d) throw new Problem('not-found', `No collection '${id.slice(0, 64).replace(/[^\w-]/g, '?')}'; the collections are: ${DATASETS.map((x) => x.name).join(', ')}.`);
  return d;
}

/** The time the collection's partitions cover; none when its folder cannot be listed (the items say why). */
const spanOf = (ctx: AppContext, d: DatasetDescriptor): Promise<Span> => partitionSpan(ctx.config.dataDir, d).catch(() => null);

/**
 * OGC API – Features Part 1 under /api/v1/ogc, behind the same key and rate limit as the data
 * endpoints. Items are the v1 endpoint's rows, through its preflight and its stream: only the
 * parameters, the paging (a keyset cursor instead of a window) and the framing are the OGC API's.
 */
export function registerOgcRoutes(scope: FastifyInstance, ctx: AppContext): void {
  const landing = async (request: FastifyRequest) => landingPage(origin(request), API_TITLE, DESCRIPTION);
  scope.get(OGC_ROOT, landing);
  scope.get(`${OGC_ROOT}/`, landing);
  scope.get(`${OGC_ROOT}/conformance`, async () => conformance());
  scope.get(`${OGC_ROOT}/collections`, async (request) => {
    const base = origin(request);
    const collections = await Promise.all(DATASETS.map(async (d) => collection(base, d, await spanOf(ctx, d))));
    return { links: [{ href: `${base}${OGC_ROOT}/collections`, rel: 'self', type: 'application/json', title: 'The collections' }], collections };
  });
  scope.get(`${OGC_ROOT}/collections/:collectionId`, async (request) => {
    const d = datasetOf(request);
    return collection(origin(request), d, await spanOf(ctx, d));
  });
  scope.get(`${OGC_ROOT}/collections/:collectionId/queryables`, async (request, reply) => {
    return reply.type('application/schema+json').send(queryables(origin(request), datasetOf(request)));
  });
  scope.route({ method: ['GET', 'HEAD'], url: `${OGC_ROOT}/collections/:collectionId/items`, handler: (request, reply) => answerItems(request, reply, ctx) });
}

function answerItems(request: FastifyRequest, reply: FastifyReply, ctx: AppContext) {
  const d = datasetOf(request);
  const raw = request.query as Record<string, unknown>;
  const iq = parseItemsQuery(d, raw, ctx.config.rowLimit);
  const cursor = typeof raw.cursor === 'string' ? raw.cursor : undefined;
  return serveQuery(request, reply, ctx, { d, q: iq.q, page: itemsPage(origin(request), d, iq, cursor) });
}
