import { z } from 'zod';
import { DATASETS, type DatasetDescriptor } from '../../datasets/index.ts';
import { formatInstant } from '../../queries/instant.ts';
import { FORMATS } from '../../queries/formats.ts';
import { Problem } from '../http/problems.ts';
import { EXPLORE_PATH, OGC_ROOT } from './html.ts';

/** The OGC API – Features documents (landing, conformance, collections, queryables), links absolute to the request's origin. */

export { OGC_ROOT };
/** The query of the landing, conformance, collection and queryables documents: only the encoding. */
export const OgcDocumentQuery = z.strictObject({ f: z.enum(['json', 'html']).optional().meta({ description: 'json, or html: a page (no key needed) that shows this document, its key typed into the page. Without f, `Accept` decides: the page when it weighs text/html above every JSON type (a browser\'s does), else JSON.' }) });

/** The query of one feature: only the encoding. */
export const OgcFeatureQuery = z.strictObject({ f: z.enum(['json', 'geojson', 'html']).optional().meta({ description: 'json or geojson: the Feature; html: a page (no key needed) showing it on a map.' }) });

/** Feature ids are the dataset's id column: any text, bound as a value, at most this long. */
export const MAX_FEATURE_ID = 200;

/** The collections whose features have ids (hotspots, burnt areas, stations). */
export const WITH_IDS = DATASETS.filter((d) => d.featureId !== null);

/** The 404 of a collection id that names none of the collections (of those with feature ids, when asked for a feature). */
export function collectionNotFound(id: string, withIds: boolean): Problem {
  const among = withIds ? WITH_IDS : DATASETS;
  return new Problem('not-found', `No collection '${id.slice(0, 64).replace(/[^\w-]/g, '?')}'${withIds ? ' with feature ids' : ''}; they are: ${among.map((x) => x.name).join(', ')}.`);
}

/** The 404 of a feature id no row has; `why` when it is known without looking (an id that cannot be in the column). */
export const featureNotFound = (d: DatasetDescriptor, why = ''): Problem => new Problem('not-found', `No feature with this id in ${d.name}${why ? `: ${why}` : ''}.`);

/** Whether `text` can be a value of the column: a whole number for a BIGINT or INTEGER column (a feature id, a cursor's key), any text otherwise. */
export function fitsColumn(d: DatasetDescriptor, column: string, text: string): boolean {
  const type = d.columns.find((c) => c.name === column)?.type;
  return type === 'BIGINT' || type === 'INTEGER' ? /^-?\d{1,18}$/.test(text) : true;
}

export const CRS84 = 'http://www.opengis.net/def/crs/OGC/1.3/CRS84';
const GREGORIAN = 'http://www.opengis.net/def/uom/ISO-8601/0/Gregorian';

/** The conformance classes met: Part 1 core, GeoJSON, HTML (the pages) and the OpenAPI 3.0 description. */
export const CONFORMANCE = [
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/html',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30',
];

export interface Link {
  href: string;
  rel: string;
  type: string;
  title?: string;
}

const JSON_TYPE = 'application/json';
const GEOJSON = 'application/geo+json';

export function landingPage(base: string, title: string, description: string) {
  return {
    title,
    description,
    links: [
      { href: `${base}${OGC_ROOT}`, rel: 'self', type: JSON_TYPE, title: 'This document' },
      { href: `${base}${OGC_ROOT}?f=html`, rel: 'alternate', type: 'text/html', title: 'This document as a page' },
      { href: `${base}/api/v1/docs`, rel: 'service-desc', type: 'application/vnd.oai.openapi+json;version=3.0', title: 'The API definition (OpenAPI 3.0)' },
      { href: `${base}/api/v1/docs?format=html`, rel: 'service-doc', type: 'text/html', title: 'The API documentation' },
      { href: `${base}${OGC_ROOT}/conformance`, rel: 'conformance', type: JSON_TYPE, title: 'Conformance classes met' },
      { href: `${base}${OGC_ROOT}/collections`, rel: 'data', type: JSON_TYPE, title: 'The collections: one per dataset' },
      // A person who finds the service by its landing page finds the explorer too (its HTML header links it already).
      { href: `${base}${EXPLORE_PATH}`, rel: 'related', type: 'text/html', title: 'Explore the data: any window counted and mapped before it is downloaded' },
    ] satisfies Link[],
  };
}

export const conformance = () => ({ conformsTo: CONFORMANCE });

/** The links of /collections: itself as JSON and as a page (/req/core/fc-md-links). */
export const collectionsLinks = (base: string): Link[] => [
  { href: `${base}${OGC_ROOT}/collections`, rel: 'self', type: JSON_TYPE, title: 'The collections' },
  { href: `${base}${OGC_ROOT}/collections?f=html`, rel: 'alternate', type: 'text/html', title: 'The collections as a page' },
];

/** The time a collection's partitions cover, as an OGC closed interval (null ends: none, or no time axis). */
export type Span = { start: bigint; end: bigint } | null;

/** The extents found in the data: the partitions' time span, the rows' bounding box (null: no geometry, or no row placed). */
export interface Extents {
  span: Span;
  box: readonly number[] | null;
}

/** One collection: a dataset, its extents and links to its items and to the v1 endpoint's other formats. */
export function collection(base: string, d: DatasetDescriptor, { span, box }: Extents) {
  const here = `${base}${OGC_ROOT}/collections/${d.name}`;
  const v1 = `${base}/api/v1/${d.name}`;
  // The partitions' span is half-open; the interval's end is the last instant it can hold.
  const interval = span ? [formatInstant(span.start), formatInstant(span.end - 1n)] : [null, null];
  return {
    id: d.name,
    title: d.title,
    description: d.description,
    extent: {
      ...(box ? { spatial: { bbox: [box], crs: CRS84 } } : {}),
      ...(d.time ? { temporal: { interval: [interval], trs: GREGORIAN } } : {}),
    },
    itemType: 'feature',
    crs: [CRS84],
    links: [
      { href: here, rel: 'self', type: JSON_TYPE, title: 'This collection' },
      { href: `${here}?f=html`, rel: 'alternate', type: 'text/html', title: 'This collection as a page' },
      { href: `${here}/items`, rel: 'items', type: GEOJSON, title: `${d.title} (GeoJSON pages)` },
      { href: `${here}/queryables`, rel: 'http://www.opengis.net/def/rel/ogc/1.0/queryables', type: 'application/schema+json', title: 'The properties items can be filtered by' },
      { href: `${v1}?format=csv`, rel: 'alternate', type: 'text/csv', title: 'The same rows as CSV (the v1 endpoint: from, to and its own parameters)' },
      { href: v1, rel: 'alternate', type: FORMATS.parquet.mediaType, title: `The same rows as GeoParquet (the v1 endpoint with Accept: ${FORMATS.parquet.mediaType})` },
    ] satisfies Link[],
  };
}

/** The filterable properties of a collection's items, as JSON Schema: the time, the geometry (bbox) and each filter. */
export function queryables(base: string, d: DatasetDescriptor) {
  const properties: Record<string, Record<string, unknown>> = {};
  if (d.time) properties[d.time.column] = { title: d.time.column, description: 'Filtered by `datetime`.', type: 'string', format: 'date-time' };
  if (d.bbox) properties.geometry = { title: 'geometry', description: 'Filtered by `bbox`.', format: d.geometry.kind === 'wkb' ? 'geometry-any' : 'geometry-point' };
  for (const f of d.filters) properties[f.param] = { title: f.param, description: f.description, type: 'string' };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${base}${OGC_ROOT}/collections/${d.name}/queryables`,
    type: 'object',
    title: d.title,
    properties,
    additionalProperties: false,
  };
}
