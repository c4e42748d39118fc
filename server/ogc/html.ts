import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml } from '../escape-html.ts';
import { prefersHtml } from '../media-types.ts';

/**
 * The HTML of /api/v1/ogc: a page that holds no data. It is served without a key; its own script
 * asks for the same resource as JSON with the key the person typed into it (kept in the tab's
 * sessionStorage, sent as a bearer header, never put in a URL) and draws it: links, a map of a
 * page's features over a world outline, a table, the next page, download commands.
 */

/** Where the pages' files are served (no key). */
export const OGC_ASSETS = '/api/v1/ogc/assets';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers `f=html` (or a browser's Accept) with a page that holds no data: no key needed for that. */
    htmlShell?: boolean;
  }
}

/** `f=html`, or no `f` and an Accept that weighs text/html above JSON (a browser's). Any other `f`, a repeated one included: not a page. */
export function wantsHtml(request: FastifyRequest): boolean {
  const f = (request.query as Record<string, unknown> | undefined)?.f;
  if (f !== undefined) return f === 'html';
  return prefersHtml(request.headers.accept);
}

/** A request for a page shell of a route that has one: it passes without a key. */
export const isHtmlShell = (request: FastifyRequest): boolean => request.routeOptions.config?.htmlShell === true && wantsHtml(request);

/** Only our own files (and Leaflet's inline styles and data images): the page loads nothing from elsewhere. */
export const OGC_PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The page: everything it shows is drawn by ogc-page.js from the JSON of the same URL. */
export function renderShell(title: string, assetsPath: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${assetsPath}/leaflet.css">
<link rel="stylesheet" href="${assetsPath}/ogc-page.css">
</head>
<body data-assets="${escapeHtml(assetsPath)}">
<header><a href="${escapeHtml(assetsPath.replace(/\/assets$/, ''))}?f=html">${escapeHtml(title)}</a> · OGC API – Features · <a href="/api/v1/docs?format=html">API documentation</a></header>
<form id="key-form" hidden><label>Your key <input id="key" type="password" autocomplete="off" required></label> <button>Use it for this tab</button>
<p>It stays in this tab (sessionStorage) and goes only in the Authorization header of this page's own requests.</p></form>
<p id="status" role="status">Loading…</p>
<main id="content"></main>
<script src="${assetsPath}/leaflet.js"></script>
<script src="${assetsPath}/ogc-page.js"></script>
</body>
</html>
`;
}

/** The page shell as the answer (CSP: our own files only). */
export function sendShell(reply: FastifyReply, title: string) {
  return reply.header('content-security-policy', OGC_PAGE_CSP).header('vary', 'Accept').type('text/html; charset=utf-8').send(renderShell(title, OGC_ASSETS));
}

/** The request's own origin, for absolute links: the Host it was sent to (X-Forwarded-Proto/Host only with TRUST_PROXY). */
export const requestOrigin = (request: FastifyRequest): string => `${request.protocol}://${request.host}`;

const moduleDir = (name: string) => path.dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));

export interface PageAsset {
  contentType: string;
  file: string;
}

/** The page's files: Leaflet from npm, our script and style. The world outline is built from world-atlas (see world.ts). */
export function pageAssets(): Record<string, PageAsset> {
  const leaflet = path.join(moduleDir('leaflet'), 'dist');
  const own = path.join(import.meta.dirname, 'assets');
  return {
    'leaflet.js': { contentType: 'text/javascript; charset=utf-8', file: path.join(leaflet, 'leaflet.js') },
    'leaflet.css': { contentType: 'text/css; charset=utf-8', file: path.join(leaflet, 'leaflet.css') },
    'ogc-page.js': { contentType: 'text/javascript; charset=utf-8', file: path.join(own, 'ogc-page.js') },
    'ogc-page.css': { contentType: 'text/css; charset=utf-8', file: path.join(own, 'ogc-page.css') },
  };
}
