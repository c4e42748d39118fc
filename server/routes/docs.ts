import { createReadStream } from 'node:fs';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { stringify } from 'yaml';
import type { AppContext } from '../app-context.ts';
import { docsAssets, DocsQuery, DOCS_PAGE_CSP, renderDocsPage } from '../openapi/docs-page.ts';
import { API_TITLE, API_VERSION, buildOpenApiDocument, listFolderValues } from '../openapi/document.ts';
import { withPublicOrigin } from '../http/public-url.ts';
import { weightedList } from '../http/weighted-list.ts';
import { Problem, invalidParameters } from '../http/problems.ts';
import { parameterErrors } from '../params/query-params.ts';

/**
 * Every string double-quoted and keys written for YAML 1.1 readers (PyYAML and others still read
 * 1.1): an unquoted 2025-08-01, yes or 200 would load as a date, a boolean or a number, not as the
 * JSON document's string.
 */
const YAML_1_1 = { version: '1.1', defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'PLAIN' } as const;

/**
 * v1 sends the page only to an Accept that names text/html and not application/json, as a
 * browser's does: a request naming JSON gets the document, as it always did, however it weighs
 * text/html (the OGC pages weigh the two). A weight of 0 names nothing: `text/html;q=0` is no page.
 */
function asksForPage(header: string | undefined): boolean {
  const names = (type: string) => weightedList(header ?? '').some((e) => e.value === type && e.q > 0);
  return names('text/html') && !names('application/json');
}

function docsFormat(request: FastifyRequest): 'json' | 'yaml' | 'html' {
  const raw = request.query as Record<string, unknown>;
  const parsed = DocsQuery.safeParse(raw);
  if (!parsed.success) throw invalidParameters(parameterErrors(parsed.error, raw, Object.keys(DocsQuery.shape)));
  // A browser following a problem `type` link asks for text/html and should land on the page, not on JSON.
  return parsed.data.format ?? (asksForPage(request.headers.accept) ? 'html' : 'json');
}

/** GET /api/v1/docs (no key): the contract, built per request so values that come from the data are current. */
export function registerDocsRoute(app: FastifyInstance, ctx: AppContext): void {
  const assets = docsAssets();
  app.get('/api/v1/docs', async (request, reply) => {
    const format = docsFormat(request);
    reply.header('vary', 'Accept');
    if (format === 'html') return reply.header('content-security-policy', withPublicOrigin(DOCS_PAGE_CSP, ctx.config.publicUrl)).type('text/html; charset=utf-8').send(renderDocsPage(API_TITLE, API_VERSION, ctx.config.publicUrl));
    const folderValues = await listFolderValues(ctx.config.dataDir);
    const doc = buildOpenApiDocument({ folderValues, rowLimit: ctx.config.rowLimit, rateLimitPerMinute: ctx.config.rateLimitPerMinute, publicUrl: ctx.config.publicUrl });
    if (format === 'yaml') return reply.type('application/yaml; charset=utf-8').send(stringify(doc, YAML_1_1));
    return reply.type('application/json; charset=utf-8').send(doc);
  });
  app.get('/api/v1/docs/assets/:asset', async (request, reply) => {
    const { asset: name } = request.params as { asset: string };
    const asset = Object.hasOwn(assets, name) ? assets[name] : undefined;
    if (!asset) throw new Problem('not-found', 'No such documentation asset.');
    reply.type(asset.contentType).header('cache-control', 'public, max-age=3600');
    return reply.send(asset.file ? createReadStream(asset.file) : asset.text);
  });
}
