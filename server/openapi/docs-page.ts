import { createRequire } from 'node:module';
import path from 'node:path';
import { z } from 'zod';
import { escapeHtml } from '../http/escape-html.ts';
import { PROBLEM_KINDS } from '../http/problems.ts';
import { PROBLEM_KIND_NAMES, PROBLEM_WHEN } from './problem-schemas.ts';

/** The query of /api/v1/docs; strict like every other endpoint. */
export const DocsQuery = z.strictObject({
  format: z
    .enum(['json', 'yaml', 'html'])
    .optional()
    .meta({ description: 'json: this OpenAPI document; yaml: the same in YAML; html: the documentation page. Without it, a browser asking for text/html gets the page, anything else JSON.' }),
});

const swaggerUiDir = () => path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/**
 * The page asks Swagger UI for the document next to it. Relative URLs keep the page working
 * behind a proxy that mounts the API under another prefix. No validator badge: it would call out.
 */
const PAGE_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({ url: 'docs?format=json', dom_id: '#swagger-ui', validatorUrl: null, docExpansion: 'list', defaultModelsExpandDepth: 0, tryItOutEnabled: false });
});
`;

export interface DocsAsset {
  contentType: string;
  /** A file served from node_modules, or text of our own. */
  file?: string;
  text?: string;
}

export function docsAssets(): Record<string, DocsAsset> {
  const dir = swaggerUiDir();
  return {
    'swagger-ui.css': { contentType: 'text/css; charset=utf-8', file: path.join(dir, 'swagger-ui.css') },
    'swagger-ui-bundle.js': { contentType: 'text/javascript; charset=utf-8', file: path.join(dir, 'swagger-ui-bundle.js') },
    'docs-page.js': { contentType: 'text/javascript; charset=utf-8', text: PAGE_SCRIPT },
  };
}

/** Only our own files and Swagger UI's inline styles and data images: the page loads nothing from elsewhere. */
export const DOCS_PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Problem kinds rendered by the server, so `type` links (`#problem-<kind>`) land before any script runs. */
function problemTable(): string {
  const rows = PROBLEM_KIND_NAMES.map((kind) => {
    const { status, title } = PROBLEM_KINDS[kind];
    const when = escapeHtml(PROBLEM_WHEN[kind]).replace(/`([^`]+)`/g, '<code>$1</code>');
    return `<tr id="problem-${kind}"><td><code>${kind}</code></td><td>${status}</td><td>${escapeHtml(title)}</td><td>${when}</td></tr>`;
  });
  return `<table class="problems"><thead><tr><th>Problem type</th><th>Status</th><th>Title</th><th>When</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

const STYLE = `body{margin:0;font-family:sans-serif}header{padding:16px 20px 0;max-width:1460px;margin:0 auto}
.problems{border-collapse:collapse;font-size:13px;margin:8px 0}.problems td,.problems th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
.problems tr:target{background:#fff4c2}`;

/**
 * The page. Its links are relative to /api/v1/docs (they work under any prefix a proxy mounts the
 * API at), or absolute under `publicUrl` (PUBLIC_URL) when the operator set one.
 */
export function renderDocsPage(title: string, version: string, publicUrl: string | null = null): string {
  const here = publicUrl === null ? 'docs' : `${escapeHtml(publicUrl)}/api/v1/docs`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} v${escapeHtml(version)}</title>
<link rel="stylesheet" href="${here}/assets/swagger-ui.css">
<style>${STYLE}</style>
</head>
<body>
<header>
<p><strong>${escapeHtml(title)} v${escapeHtml(version)}</strong> · machine-readable contract: <a href="${here}?format=json">OpenAPI 3.0 (JSON)</a> · <a href="${here}?format=yaml">YAML</a></p>
<details open><summary>Problem types</summary>${problemTable()}</details>
</header>
<div id="swagger-ui"></div>
<script src="${here}/assets/swagger-ui-bundle.js"></script>
<script src="${here}/assets/docs-page.js"></script>
</body>
</html>
`;
}
