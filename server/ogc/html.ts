import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml } from '../http/escape-html.ts';
import { prefersHtml } from '../http/media-types.ts';
import { pagePrefix, withPublicOrigin } from '../http/public-url.ts';

/**
 * The HTML of /api/v1/ogc: a page that holds no data. It is served without a key; its own script
 * asks for the same resource as JSON with the key the person typed into it (kept in the tab's
 * sessionStorage, sent as a bearer header, never put in a URL) and draws it: links, a map of a
 * page's features over a world outline, a table, the next page, download commands.
 */

/** The OGC API's root (documents.ts hands it on to the routes). */
export const OGC_ROOT = '/api/v1/ogc';

/** Where the pages' files are served (no key). */
export const OGC_ASSETS = `${OGC_ROOT}/assets`;

/** The explorer page (routes/explore.ts), linked from every OGC page. */
export const EXPLORE_PATH = '/api/v1/explore';

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

/** What differs between the pages: their title, header, body, own scripts and style; the frame, Leaflet and the key form are shared. */
export interface PageParts {
  title: string;
  /** HTML of the header line, after the title link. */
  header: string;
  /** HTML between the status line and the scripts. */
  main: string;
  scripts: readonly string[];
  style: string;
  /** Extra attributes of <body>: configuration the script reads (never data, never a key). */
  data?: Readonly<Record<string, string>>;
}

const KEY_FORM = `<form id="key-form" hidden><label>Your key <input id="key" type="password" autocomplete="off" required></label> <button>Use it for this tab</button>
<p>It stays in this tab (sessionStorage) and goes only in the Authorization header of this page's own requests.</p></form>`;

/**
 * A page that holds no data: its scripts ask for the data with the key typed into it. `prefix`
 * (pagePrefix: PUBLIC_URL, or nothing) goes before every link and file of the page, and its
 * scripts build their URLs on it (data-base; empty: the page's own origin).
 */
export function renderPage(p: PageParts, prefix: string): string {
  const assetsPath = `${prefix}${OGC_ASSETS}`;
  const data = Object.entries(p.data ?? {}).map(([k, v]) => ` data-${k}="${escapeHtml(v)}"`).join('');
  const scripts = ['leaflet.js', ...p.scripts].map((s) => `<script src="${escapeHtml(assetsPath)}/${s}"></script>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(p.title)}</title>
<link rel="stylesheet" href="${escapeHtml(assetsPath)}/leaflet.css">
<link rel="stylesheet" href="${escapeHtml(assetsPath)}/${p.style}">
</head>
<body data-assets="${escapeHtml(assetsPath)}" data-base="${escapeHtml(prefix)}"${data}>
<header>${p.header}</header>
${KEY_FORM}
<p id="status" role="status">Loading…</p>
${p.main}
${scripts}
</body>
</html>
`;
}

/** The header line every page shares after its own first link: the other pages, under `prefix`. */
export const pageLinks = (prefix: string, first: string): string =>
  `${first} · <a href="${escapeHtml(prefix)}${EXPLORE_PATH}">Explore the data</a> · <a href="${escapeHtml(prefix)}/api/v1/docs?format=html">API documentation</a>`;

/** The OGC pages: everything they show is drawn by ogc-page.js from the JSON of the same URL. */
export function renderShell(title: string, prefix: string): string {
  const home = `<a href="${escapeHtml(prefix)}${OGC_ROOT}?f=html">${escapeHtml(title)}</a>`;
  return renderPage({ title, header: pageLinks(prefix, `${home} · OGC API – Features`), main: '<main id="content"></main>', scripts: ['ogc-page.js'], style: 'ogc-page.css' }, prefix);
}

/** A page as the answer (CSP: our own files only, here or under PUBLIC_URL). */
export function sendPage(reply: FastifyReply, html: string, publicUrl: string | null) {
  return reply.header('content-security-policy', withPublicOrigin(OGC_PAGE_CSP, publicUrl)).header('vary', 'Accept').type('text/html; charset=utf-8').send(html);
}

/** The OGC page shell as the answer. */
export const sendShell = (reply: FastifyReply, title: string, publicUrl: string | null) => sendPage(reply, renderShell(title, pagePrefix(publicUrl)), publicUrl);

const moduleDir = (name: string) => path.dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));

export interface PageAsset {
  contentType: string;
  file: string;
}

/** The explorer page's scripts, in the order it loads them (see routes/explore.ts). */
export const EXPLORE_SCRIPTS = ['explore-api.js', 'explore-chart.js', 'explore-map.js', 'explore-panel.js', 'explore-summary.js', 'explore-page.js'];
const EXPLORE_FILES = ['explore.css', ...EXPLORE_SCRIPTS];

/** The page's files: Leaflet from npm, our script and style. The world outline is built from world-atlas (see world.ts). */
export function pageAssets(): Record<string, PageAsset> {
  const leaflet = path.join(moduleDir('leaflet'), 'dist');
  const own = path.join(import.meta.dirname, 'assets');
  return {
    'leaflet.js': { contentType: 'text/javascript; charset=utf-8', file: path.join(leaflet, 'leaflet.js') },
    'leaflet.css': { contentType: 'text/css; charset=utf-8', file: path.join(leaflet, 'leaflet.css') },
    'ogc-page.js': { contentType: 'text/javascript; charset=utf-8', file: path.join(own, 'ogc-page.js') },
    'ogc-page.css': { contentType: 'text/css; charset=utf-8', file: path.join(own, 'ogc-page.css') },
    ...Object.fromEntries(EXPLORE_FILES.map((name) => [name, { contentType: name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8', file: path.join(own, name) }])),
  };
}
