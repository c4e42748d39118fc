import { createReadStream } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DATASETS, type DatasetDescriptor } from '../../datasets/index.ts';
import { partitionSpan } from '../../queries/files/partitions.ts';
import type { AppContext } from '../app-context.ts';
import { keyedOnly } from '../access/auth.ts';
import { API_TITLE } from '../openapi/document.ts';
import { collection, collectionNotFound, collectionsLinks, conformance, landingPage, OGC_ROOT, OgcDocumentQuery, queryables, type Extents, type Span } from '../ogc/documents.ts';
import { OGC_ASSETS, pageAssets, sendShell, wantsHtml } from '../ogc/html.ts';
import { itemsPage } from '../ogc/items-page.ts';
import { parseItemsQuery } from '../ogc/items-query.ts';
import { worldOutline } from '../ogc/world.ts';
import { linkBase } from '../http/public-url.ts';
import { invalidParameters, Problem, toProblem } from '../http/problems.ts';
import { requestSignal } from '../http/request-signal.ts';
import { parameterErrors } from '../params/query-params.ts';
import { serveQuery } from './dataset.ts';
import { registerOgcFeatureRoute } from './ogc-feature.ts';


const DESCRIPTION = 'Fire data (satellite active-fire detections, burnt areas, fire danger, ground sensors) as OGC API – Features: one collection per dataset, GeoJSON pages walked by their next links.';

function datasetOf(request: FastifyRequest): DatasetDescriptor {
  const id = (request.params as { collectionId: string }).collectionId;
  const d = DATASETS.find((x) => x.name === id);
  if (!d) throw collectionNotFound(id, false);
  return d;
}

/**
 * A collection's extents: the time its partitions cover (none when its folder cannot be listed: the
 * items say why) and the box of its rows, measured once per file (the engine may be busy: 503).
 */
async function extentsOf(ctx: AppContext, signal: AbortSignal, d: DatasetDescriptor): Promise<Extents> {
  const span: Span = await partitionSpan(ctx.config.dataDir, d).catch(() => null);
  const box = await ctx.extents.of(d, signal).catch((e: unknown) => {
    throw toProblem(e, ctx.config.retryAfterSeconds);
  });
  return { span, box };
}

/** A document route: its `f` validated, the page shell (its links under `publicUrl`) for HTML, else `build`'s JSON. */
function document(publicUrl: string | null, build: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>, title: (request: FastifyRequest) => string) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = request.query as Record<string, unknown>;
    const parsed = OgcDocumentQuery.safeParse(raw);
    if (!parsed.success) throw invalidParameters(parameterErrors(parsed.error, raw, Object.keys(OgcDocumentQuery.shape)));
    if (wantsHtml(request)) return sendShell(reply, title(request), publicUrl);
    keyedOnly(request);
    return reply.header('vary', 'Accept').send(await build(request, reply));
  };
}

/**
 * OGC API – Features Part 1 under /api/v1/ogc, behind the same key and rate limit as the data
 * endpoints (but for the page shells, which hold no data). Items are the v1 endpoint's rows, through
 * its preflight and its stream: only the parameters, the paging (a keyset cursor instead of a
 * window) and the framing are the OGC API's.
 */
export function registerOgcRoutes(scope: FastifyInstance, ctx: AppContext): void {
  const config = { htmlShell: true };
  const publicUrl = ctx.config.publicUrl;
  const landing = document(publicUrl, async (request) => landingPage(linkBase(ctx.config.publicUrl, request), API_TITLE, DESCRIPTION), () => API_TITLE);
  scope.get(OGC_ROOT, { config }, landing);
  scope.get(`${OGC_ROOT}/`, { config }, landing);
  scope.get(`${OGC_ROOT}/conformance`, { config }, document(publicUrl, async () => conformance(), () => 'Conformance'));
  scope.get(`${OGC_ROOT}/collections`, { config }, document(publicUrl, async (request, reply) => {
    const base = linkBase(ctx.config.publicUrl, request);
    const { signal } = requestSignal(reply, ctx.config);
    const collections = [];
    for (const d of DATASETS) collections.push(collection(base, d, await extentsOf(ctx, signal, d)));
    return { links: collectionsLinks(base), collections };
  }, () => 'Collections'));
  scope.get(`${OGC_ROOT}/collections/:collectionId`, { config }, document(publicUrl, async (request, reply) => {
    const d = datasetOf(request);
    return collection(linkBase(ctx.config.publicUrl, request), d, await extentsOf(ctx, requestSignal(reply, ctx.config).signal, d));
  }, (request) => datasetOf(request).title));
  scope.get(`${OGC_ROOT}/collections/:collectionId/queryables`, { config }, document(publicUrl, async (request, reply) => {
    reply.type('application/schema+json');
    return queryables(linkBase(ctx.config.publicUrl, request), datasetOf(request));
  }, (request) => `${datasetOf(request).title}: queryables`));
  scope.route({ method: ['GET', 'HEAD'], url: `${OGC_ROOT}/collections/:collectionId/items`, config, handler: (request, reply) => answerItems(request, reply, ctx) });
  registerOgcFeatureRoute(scope, ctx);
}

function answerItems(request: FastifyRequest, reply: FastifyReply, ctx: AppContext) {
  const d = datasetOf(request);
  const raw = request.query as Record<string, unknown>;
  const iq = parseItemsQuery(d, raw, ctx.config.rowLimit);
  if (wantsHtml(request)) return sendShell(reply, `${d.title}: features`, ctx.config.publicUrl);
  const cursor = typeof raw.cursor === 'string' ? raw.cursor : undefined;
  return serveQuery(request, reply, ctx, { d, q: iq.q, page: itemsPage(linkBase(ctx.config.publicUrl, request), d, iq, cursor) });
}

/** The pages' files (no key: they hold no data), and the world outline under the map. */
export function registerOgcAssets(app: FastifyInstance): void {
  const assets = pageAssets();
  app.get(`${OGC_ASSETS}/:asset`, async (request, reply) => {
    const { asset: name } = request.params as { asset: string };
    reply.header('cache-control', 'public, max-age=3600');
    if (name === 'world.json') return reply.type('application/geo+json').send(await worldOutline());
    const asset = Object.hasOwn(assets, name) ? assets[name] : undefined;
    if (!asset) throw new Problem('not-found', 'No such page asset.');
    return reply.type(asset.contentType).send(createReadStream(asset.file));
  });
}
