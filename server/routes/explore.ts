import type { FastifyInstance } from 'fastify';
import { DATASETS, type DatasetDescriptor } from '../../datasets/index.ts';
import { aggregateQuerySchema } from '../params/aggregate-params.ts';
import type { AppContext } from '../app-context.ts';
import { escapeHtml } from '../http/escape-html.ts';
import { EXPLORE_PATH, EXPLORE_SCRIPTS, renderPage, sendPage } from '../ogc/html.ts';
import { pagePrefix } from '../http/public-url.ts';
import { queryParameters } from '../openapi/dataset-operation.ts';
import { listFolderValues } from '../openapi/document.ts';
import type { SchemaObject } from '../openapi/schema-convert.ts';

/** The window and the answer's shape are the page's own controls; every other parameter of the aggregate is a filter input. */
const NOT_FILTERS = new Set(['from', 'to', 'format', 'interval', 'groupBy', 'cell', 'stats']);

/** What the page needs to know of a dataset to build its inputs: the aggregate's own parameters, as the OpenAPI document describes them. */
function describe(d: DatasetDescriptor, folderValues: readonly string[]) {
  const filters = queryParameters(aggregateQuerySchema(d, folderValues))
    .filter((p) => !NOT_FILTERS.has(p.name as string))
    .map((p) => {
      const schema = p.schema as SchemaObject;
      return { name: p.name, description: p.description ?? '', enum: schema.enum ?? null, default: schema.default ?? null };
    });
  const grid = d.aggregate!.keys.some((k) => k.kind === 'grid');
  return { name: d.name, title: d.title, geometry: d.geometry.kind, grid, measures: d.aggregate!.measures, keys: d.aggregate!.keys.map((k) => k.name), filters };
}

const MAIN = `<main class="explore">
<form id="view" aria-label="What to show">
<p id="url-note" class="cut" role="status"></p>
<label>Dataset <select id="dataset" name="dataset"></select></label>
<fieldset><legend>Window (UTC, [from, to))</legend>
<label>From <input id="from" name="from" type="datetime-local" step="1" required></label>
<label>To <input id="to" name="to" type="datetime-local" step="1" required></label>
<span class="presets"><button type="button" data-days="1">Last 24 h</button> <button type="button" data-days="7">7 days</button> <button type="button" data-days="30">30 days</button> <button type="button" data-days="365">A year</button></span>
</fieldset>
<fieldset id="area"><legend>Area</legend>
<label>Box <input id="bbox" name="bbox" placeholder="minLon,minLat,maxLon,maxLat" size="28"></label>
<button type="button" id="draw-box" aria-pressed="false">Draw a box</button> <button type="button" id="use-view">Use the current view</button> <button type="button" id="clear-box">No box</button>
</fieldset>
<fieldset id="filters"><legend>Filters</legend></fieldset>
<fieldset id="layer"><legend>Show</legend></fieldset>
<button type="submit" id="apply">Show this view</button>
</form>
<section id="summary" aria-live="polite">
<p><span id="row-count">…</span> <span id="row-word">rows</span> <span id="window-echo"></span> <span id="truncation"></span></p>
<p id="downloads"><button type="button" id="download-csv">CSV</button> <button type="button" id="download-geojson">GeoJSON</button> <button type="button" id="download-parquet">GeoParquet</button> <button type="button" id="download-arrow">Arrow</button> <span id="download-note"></span></p>
<p><code id="csv-url"></code></p>
</section>
<div id="map" role="region" aria-label="Map"></div>
<p id="map-note"></p>
<figure id="counts"><figcaption id="counts-caption">Rows per bucket</figcaption><svg id="chart" role="img" aria-label="Rows per time bucket; drag across it to narrow the window"></svg></figure>
<figure id="series" hidden><figcaption id="series-caption"></figcaption><svg id="series-chart" role="img"></svg><ul id="series-legend"></ul></figure>
<section id="walk" hidden><h2>Over the row limit: the whole window</h2><p>Walk it into one citable file with <code>fire-api extract</code> (the key in <code>FIRE_API_KEY</code>), or add the OGC items URL in QGIS (the key as a Basic password).</p>
<pre id="extract-command"></pre><button type="button" data-copy="extract-command">Copy the command</button>
<pre id="ogc-url"></pre><button type="button" data-copy="ogc-url">Copy the OGC items URL</button></section>
</main>`;

const header = (prefix: string) => {
  const p = escapeHtml(prefix);
  return `<a href="${p}${EXPLORE_PATH}">Explore the data</a> · <a href="${p}/api/v1/ogc?f=html">OGC API – Features</a> · <a href="${p}/api/v1/docs?format=html">API documentation</a>`;
};

/**
 * GET /api/v1/explore (no key): a page that holds no data. Its scripts ask the aggregate and data
 * endpoints with the key typed into it; the view it shows is in its own URL, which the server
 * does not read. It carries the row limit (published in /api/v1/docs too) and each dataset's filters.
 */
export function registerExploreRoute(app: FastifyInstance, ctx: AppContext): void {
  app.get(EXPLORE_PATH, async (_request, reply) => {
    const folderValues = await listFolderValues(ctx.config.dataDir);
    const datasets = DATASETS.filter((d) => d.aggregate).map((d) => describe(d, folderValues[d.name] ?? []));
    const data = { 'row-limit': String(ctx.config.rowLimit), datasets: JSON.stringify(datasets) };
    const prefix = pagePrefix(ctx.config.publicUrl);
    return sendPage(reply, renderPage({ title: 'Explore the data', header: header(prefix), main: MAIN, scripts: EXPLORE_SCRIPTS, style: 'explore.css', data }, prefix), ctx.config.publicUrl);
  });
}
