import { DATASETS, type DatasetDescriptor } from '../../datasets/index.ts';
import { BOX_HEIGHTS } from '../params/bbox-param.ts';
import { CONFORMANCE, MAX_FEATURE_ID, OGC_ROOT, OgcDocumentQuery, OgcFeatureQuery, WITH_IDS } from '../ogc/documents.ts';
import { OGC_ASSETS, pageAssets } from '../ogc/html.ts';
import { ogcItemsShape } from '../ogc/items-query.ts';
import { datasetOwnSchema } from '../params/query-params.ts';
import { datasetSchemaPrefix, problemRef, queryParameters } from './dataset-operation.ts';
import { dataHeaders, headerComponents, rateLimitHeaders } from './headers.ts';
import { problemSchemaId } from './problem-schemas.ts';
import { componentRef, type SchemaObject } from './schema-convert.ts';
import { z } from 'zod';

/** OGC API – Features Part 1 in the contract: the paths under /api/v1/ogc, their parameters and bodies. */

const TAG = 'OGC API – Features';
const KEY = [{ bearerAuth: [] }, { basicAuth: [] }];

const LINK: SchemaObject = {
  type: 'object',
  required: ['href', 'rel', 'type'],
  additionalProperties: false,
  properties: { href: { type: 'string' }, rel: { type: 'string' }, type: { type: 'string' }, title: { type: 'string' } },
};
const LINKS: SchemaObject = { type: 'array', items: LINK };

const COLLECTION: SchemaObject = {
  type: 'object',
  required: ['id', 'title', 'description', 'extent', 'itemType', 'crs', 'links'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', enum: DATASETS.map((d) => d.name) },
    title: { type: 'string' },
    description: { type: 'string' },
    extent: {
      type: 'object',
      description: 'Spatial (CRS84): the box of the rows\' geometries, each file measured once; absent for a collection without geometry or with no row placed. Temporal (datasets with time): from the start of the first partition folder to the last instant of the last one; null ends when there is none.',
      properties: {
        spatial: { type: 'object', properties: { bbox: { type: 'array', items: { type: 'array', items: { type: 'number' }, minItems: 4, maxItems: 4 } }, crs: { type: 'string' } } },
        temporal: { type: 'object', properties: { interval: { type: 'array', items: { type: 'array', items: { type: 'string', nullable: true }, minItems: 2, maxItems: 2 } }, trs: { type: 'string' } } },
      },
    },
    itemType: { type: 'string', enum: ['feature'] },
    crs: { type: 'array', items: { type: 'string' } },
    links: LINKS,
  },
};

const ITEMS: SchemaObject = {
  type: 'object',
  description: 'A page of features: the rows of the v1 endpoint as its GeoJSON Features, in the dataset\'s order. `numberReturned`, `timeStamp` and `links` (self, alternate, next when there is more, collection) come before the features; `numberMatched` is sent when the first page holds every matching feature (it is not counted otherwise).',
  required: ['type', 'numberReturned', 'timeStamp', 'links', 'features'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: ['FeatureCollection'] },
    numberMatched: { type: 'integer', minimum: 0 },
    numberReturned: { type: 'integer', minimum: 0 },
    timeStamp: { type: 'string', format: 'date-time', description: 'When the service had read the version of the data this page comes from (its files listed and checked), UTC, whole seconds. The one value that differs between two answers with the same ETag.' },
    links: LINKS,
    features: { type: 'array', items: { anyOf: DATASETS.map((d) => ({ $ref: componentRef(`${datasetSchemaPrefix(d)}Feature`) })) } },
  },
};

/** A page shell (f=html, or a browser's Accept): no data in it, no key needed for it. */
const HTML = { 'text/html': { schema: { type: 'string', description: 'A page that holds no data (served without a key): its script asks for this resource as JSON with the key typed into the page, and shows it.' } } };

const json = (description: string, schema: SchemaObject, type = 'application/json'): SchemaObject => ({ description, headers: rateLimitHeaders(), content: { [type]: { schema }, ...HTML } });

/** An unknown collection: the not-found problem, with the rate limit's headers (it passed the key). */
const NOT_FOUND: SchemaObject = { description: 'No such collection.', headers: rateLimitHeaders(), content: { 'application/problem+json': { schema: { $ref: componentRef(problemSchemaId('not-found')) } } } };

const COLLECTION_ID: SchemaObject = { name: 'collectionId', in: 'path', required: true, description: 'A dataset.', schema: { type: 'string', enum: DATASETS.map((d) => d.name) } };

const ERRORS = { 401: problemRef('unauthorized'), 403: problemRef('forbidden'), 429: problemRef('rate-limited'), 500: problemRef('internal') };

/** A GET under the key; its page shell (f=html) is served without one. Document routes take `f` and nothing else. */
function operation(operationId: string, summary: string, ok: SchemaObject, extra: SchemaObject = {}): SchemaObject {
  const parameters = (extra.parameters as SchemaObject[] | undefined) ?? [];
  const withF = parameters.some((p) => p.name === 'f') ? parameters : [...parameters, ...queryParameters(OgcDocumentQuery)];
  return { get: { operationId, tags: [TAG], summary, security: KEY, ...extra, parameters: withF, responses: { 200: ok, 400: problemRef('invalid-parameter'), ...ERRORS, ...((extra.responses as SchemaObject) ?? {}) } } };
}

/** Four numbers, or six with heights, comma-separated. */
const BBOX: SchemaObject = { type: 'array', minItems: 4, maxItems: 6, items: { type: 'number' } };

/** Every dataset's own parameters (filters, bbox, options), each described with the collections that take it. */
function datasetParameters(): SchemaObject[] {
  const byName = new Map<string, { p: SchemaObject; collections: string[] }>();
  for (const d of DATASETS) {
    for (const p of queryParameters(datasetOwnSchema(d))) {
      const seen = byName.get(p.name as string) ?? { p: { ...p, schema: { type: 'string' } }, collections: [] };
      seen.collections.push(d.name);
      byName.set(p.name as string, seen);
    }
  }
  return [...byName.values()].map(({ p, collections }) => {
    const described = { ...p, description: `Collections ${collections.join(', ')} only (as on their v1 endpoint): ${String(p.description ?? '')}` };
    // bbox reads more here than on the v1 endpoint (a 3-D box too), written as /req/core/fc-bbox-definition has it.
    return p.name === 'bbox' ? { ...described, description: `${described.description} ${BOX_HEIGHTS}`, style: 'form', explode: false, schema: BBOX } : described;
  });
}

/** The headers of a GeoJSON page or feature: the data endpoint's, none required (the HTML page holds no data, so has none), and Link. */
function pageHeaders(): SchemaObject {
  const window = (bound: string) => ({ description: `The page's window ${bound} (datetime and cursor resolved); absent for a collection without time.`, schema: { type: 'string' } });
  // The data headers come with a GeoJSON page, not with the HTML page (it holds no data): none is required.
  const components = headerComponents();
  const optional = Object.fromEntries(Object.keys(dataHeaders(DATASETS.find((d) => d.time)!)).map((name) => [name, { ...components[name], required: false }]));
  return {
    ...optional,
    'X-Window-From': window('start'),
    'X-Window-To': window('end (exclusive)'),
    Link: { description: 'The links of the page or feature (self, alternate, next, collection) as in its body.', schema: { type: 'string' } },
  };
}

function itemsOperation(rowLimit: number): SchemaObject {
  const headers = pageHeaders();
  return operation('getOgcItems', 'A page of a collection\'s features', { description: 'The page.', headers, content: { 'application/geo+json': { schema: ITEMS }, ...HTML } }, {
    description: 'Pages are cut where the v1 endpoint cuts (before the first instant that would pass `limit`), or after `limit` rows when one instant holds more; the `next` link\'s cursor continues after the last row, so a walk returns each row once, also while files are added.',
    parameters: [COLLECTION_ID, ...queryParameters(z.object(ogcItemsShape(rowLimit))), ...datasetParameters()],
    responses: { 304: { $ref: '#/components/responses/NotModified' }, 400: problemRef('invalid-parameter'), 404: NOT_FOUND, 503: problemRef('unavailable') },
  });
}

/** A collection's Feature (its component's members) with the links of /req/core/f-links. */
function featureWithLinks(d: DatasetDescriptor): SchemaObject {
  const member = (name: string) => ({ $ref: `${componentRef(`${datasetSchemaPrefix(d)}Feature`)}/properties/${name}` });
  return {
    type: 'object',
    required: ['type', 'id', 'geometry', 'properties', 'links'],
    additionalProperties: false,
    properties: { type: member('type'), id: member('id'), geometry: member('geometry'), properties: member('properties'), links: LINKS },
  };
}

function featureOperation(headers: SchemaObject): SchemaObject {
  const feature = { anyOf: WITH_IDS.map(featureWithLinks) };
  const ok = { description: 'The Feature, as in an items page, with its links (self, alternate: the page with a map, collection), also sent as the Link header.', headers, content: { 'application/geo+json': { schema: feature }, ...HTML } };
  return operation('getOgcFeature', 'One feature by its id', ok, {
    description: 'Searches the whole collection for the row with this id (hotspots `id`, burnt areas `id`, stations `stationId`).',
    parameters: [
      { ...COLLECTION_ID, schema: { type: 'string', enum: WITH_IDS.map((d) => d.name) } },
      { name: 'featureId', in: 'path', required: true, description: 'The feature\'s id.', schema: { type: 'string', maxLength: MAX_FEATURE_ID } },
      ...queryParameters(OgcFeatureQuery),
    ],
    responses: { 304: { $ref: '#/components/responses/NotModified' }, 404: NOT_FOUND, 503: problemRef('unavailable') },
  });
}

export function ogcPaths(rowLimit: number): Record<string, SchemaObject> {
  const landing = operation('getOgcLanding', 'OGC API – Features landing page', json('Links to the API definition, the conformance classes and the collections.', { type: 'object', required: ['links'], properties: { title: { type: 'string' }, description: { type: 'string' }, links: LINKS } }));
  const withCollection = { parameters: [COLLECTION_ID], responses: { 404: NOT_FOUND } };
  return {
    [OGC_ROOT]: landing,
    [`${OGC_ROOT}/`]: { get: { ...(landing.get as SchemaObject), operationId: 'getOgcLandingSlash' } },
    [`${OGC_ROOT}/conformance`]: operation('getOgcConformance', 'Conformance classes met', json('The classes.', { type: 'object', required: ['conformsTo'], properties: { conformsTo: { type: 'array', items: { type: 'string', enum: CONFORMANCE } } } })),
    [`${OGC_ROOT}/collections`]: operation('getOgcCollections', 'The collections: one per dataset', json('The collections.', { type: 'object', required: ['links', 'collections'], additionalProperties: false, properties: { links: LINKS, collections: { type: 'array', items: COLLECTION } } })),
    [`${OGC_ROOT}/collections/{collectionId}`]: operation('getOgcCollection', 'One collection: extents and links', json('The collection.', COLLECTION), withCollection),
    [`${OGC_ROOT}/collections/{collectionId}/queryables`]: operation('getOgcQueryables', 'The properties items can be filtered by (JSON Schema)', json('The queryables.', { type: 'object', required: ['type', 'properties'], properties: { type: { type: 'string' }, properties: { type: 'object' } } }, 'application/schema+json'), withCollection),
    [`${OGC_ROOT}/collections/{collectionId}/items`]: itemsOperation(rowLimit),
    [`${OGC_ROOT}/collections/{collectionId}/items/{featureId}`]: featureOperation(pageHeaders()),
    [`${OGC_ASSETS}/{asset}`]: {
      get: {
        operationId: 'getOgcPageAsset',
        tags: [TAG],
        summary: 'Script, style and world outline of the pages (Leaflet and Natural Earth from npm, served by this service)',
        security: [],
        parameters: [{ name: 'asset', in: 'path', required: true, schema: { type: 'string', enum: [...Object.keys(pageAssets()), 'world.json'] } }],
        responses: {
          200: { description: 'The file.', content: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } }, 'application/geo+json': { schema: { type: 'object' } } } },
          404: problemRef('not-found'),
          500: problemRef('internal'),
        },
      },
    },
  };
}
