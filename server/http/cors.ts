import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Problem, sendProblem } from './problems.ts';

/** Origins whose pages may read the API: every origin (`*`), or only those listed. */
export type CorsOrigins = '*' | readonly string[];

/**
 * What a page's script may read of an answer besides the CORS-safelisted headers: meta (`X-*`),
 * validators, the rate limit, paging links and when to retry (also on 401, 429 and 503).
 */
const EXPOSED = [
  'ETag',
  'Link',
  'Retry-After',
  'WWW-Authenticate',
  'Content-Encoding',
  'X-Window-From',
  'X-Window-To',
  'X-Truncated',
  'X-Next-From',
  'X-Row-Limit',
  'X-Returned',
  'X-Chain-Last-Success',
  'X-Data-Version',
  'X-Query',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
].join(', ');

/** Request headers a page may send: the key, content negotiation and revalidation. */
const ALLOWED_HEADERS = 'Authorization, Accept, If-None-Match';
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** `CORS_ORIGINS`: `*`, empty (no page on another origin may read the API), or a comma-separated list of origins such as `https://notebook.example.org`. */
export function parseCorsOrigins(text: string): CorsOrigins {
  if (text.trim() === '*') return '*';
  const listed = text.split(',').map((o) => o.trim()).filter(Boolean);
  for (const o of listed) {
    const origin = URL.canParse(o) ? new URL(o).origin : 'null';
    if (origin !== o) throw new Error(`'${o}' is not an origin (scheme://host[:port], no path or trailing slash)`);
  }
  return listed;
}

const underApi = (request: FastifyRequest) => request.url.startsWith('/api/v1/') || request.url === '/api/v1' || request.url.startsWith('/api/v1?');

/** The Access-Control-Allow-Origin value for this request, or null when its origin may not read the answer. */
function allowedOrigin(origins: CorsOrigins, request: FastifyRequest): string | null {
  const origin = request.headers.origin;
  if (origin === undefined || !underApi(request)) return null;
  if (origins === '*') return '*';
  return origins.includes(origin) ? origin : null;
}

/** The answer depends on Origin only when the origins are listed (a cache must then keep one answer per origin). */
function varyOnOrigin(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  reply.header('vary', vary === undefined || vary === '' ? 'Origin' : `${String(vary)}, Origin`);
}

/**
 * CORS for everything under /api/v1: a preflight is answered without a key (it carries none, and
 * tells nothing a page could not learn by trying), and every answer, problems included, says which
 * origins may read it and which headers they may see. Keys are never ambient — a browser does not
 * attach them by itself as it does cookies — so a page on another origin can only use a key its
 * user typed into it; that is why every origin is allowed unless the operator lists some.
 */
export function registerCors(app: FastifyInstance, origins: CorsOrigins): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const allowed = allowedOrigin(origins, request);
    if (origins !== '*' && underApi(request)) varyOnOrigin(reply);
    if (allowed !== null) reply.header('access-control-allow-origin', allowed).header('access-control-expose-headers', EXPOSED);
    return payload;
  });
  // Answered before any body is read: a preflight has none, and OPTIONS with a body stays the 404 it was.
  app.route({ method: 'OPTIONS', url: '/api/v1/*', onRequest: answerPreflight(origins), handler: async (request, reply) => notFound(request, reply) });
}

const notFound = (request: FastifyRequest, reply: FastifyReply) => sendProblem(request, reply, new Problem('not-found', 'No such resource.'));

function answerPreflight(origins: CorsOrigins) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const allowed = allowedOrigin(origins, request);
    if (allowed === null || request.headers['access-control-request-method'] === undefined) return notFound(request, reply);
    return reply
      .code(204)
      .header('access-control-allow-methods', 'GET, HEAD')
      .header('access-control-allow-headers', ALLOWED_HEADERS)
      .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS))
      .send();
  };
}
