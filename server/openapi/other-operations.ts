import { z } from 'zod';
import { DATASETS } from '../../datasets/index.ts';
import { FAILING_LISTED } from '../../queries/files/states.ts';
import { problemRef, queryParameters } from './dataset-operation.ts';
import { EXPLORE_PATH } from '../ogc/html.ts';
import { docsAssets, DocsQuery } from './docs-page.ts';
import { componentRef, type SchemaObject } from './schema-convert.ts';

export const Health = z.object({ status: z.literal('ok') });

export const Readiness = z.object({
  status: z.literal('ready'),
  engine: z.object({ connections: z.int().min(0), busy: z.int().min(0) }).meta({ description: 'DuckDB connections, and how many are running a query.' }),
  datasets: z.array(
    z.object({
      dataset: z.enum(DATASETS.map((d) => d.name) as [string, ...string[]]),
      available: z.boolean(),
      reason: z.string().nullable().meta({ description: 'Why the dataset is unavailable; null when available.' }),
      chainAgeSeconds: z.int().min(0).nullable().meta({ description: 'Seconds since the feeding chain last succeeded; null when unknown or unavailable.', 'x-unit': 's' }),
      files: z
        .object({ ok: z.int().min(0), failing: z.int().min(0), unsorted: z.int().min(0) })
        .meta({ description: 'Data files checked so far, by state: servable and stored in order, failing their check (windows touching them answer 503), servable but sorted on the fly. Files not checked yet are in none.' }),
      failingFiles: z
        .array(z.object({ path: z.string().meta({ description: 'Relative to the data folder.' }), problem: z.string() }))
        .max(FAILING_LISTED)
        .meta({ description: `The first ${FAILING_LISTED} failing files by path, with what is wrong.` }),
    }),
  ),
  corrections: z
    .array(
      z.object({
        dataset: z.enum(DATASETS.filter((d) => d.correction).map((d) => d.name) as [string, ...string[]]),
        published: z.int().min(0).meta({ description: 'Valid model files.' }),
        latest: z.string().nullable().meta({ description: 'The model the corrected series applies by default; null when none is published.' }),
        failing: z
          .array(z.object({ path: z.string().meta({ description: 'Relative to the data folder.' }), problem: z.string() }))
          .meta({ description: 'Model files that cannot be read or are invalid: while there is one, the corrected series answers 503 (the raw series is not affected).' }),
      }),
    )
    .meta({ description: 'The correction layers (sensor-readings) and the state of their model files.' }),
});

const NO_KEY: SchemaObject[] = [];
const text = (description: string, mediaType: string): SchemaObject => ({ description, content: { [mediaType]: { schema: { type: 'string' } } } });
const json = (description: string, schema: SchemaObject): SchemaObject => ({ description, content: { 'application/json': { schema } } });

const THIS_DOCUMENT: SchemaObject = {
  type: 'object',
  description: 'This OpenAPI 3.0 document.',
  required: ['openapi', 'info', 'paths', 'components'],
  properties: { openapi: { type: 'string', pattern: '^3\\.0\\.\\d+$' }, info: { type: 'object' }, paths: { type: 'object' }, components: { type: 'object' } },
};

function docsOperation(): SchemaObject {
  return {
    operationId: 'getDocs',
    tags: ['Documentation'],
    summary: 'This contract (OpenAPI 3.0), or the documentation page',
    description: 'The machine-readable contract, generated from the schemas that validate requests and describe responses. No key needed. Valid values that come from the data (e.g. `model`) are listed as they are at the time of the request.',
    security: NO_KEY,
    parameters: queryParameters(DocsQuery),
    responses: {
      200: {
        description: 'The document (JSON or YAML) or the HTML page.',
        headers: { Vary: { description: 'The answer depends on `Accept` when `format` is not given.', schema: { type: 'string' } } },
        content: {
          'application/json': { schema: THIS_DOCUMENT },
          'application/yaml': { schema: { type: 'string' } },
          'text/html': { schema: { type: 'string' } },
        },
      },
      400: problemRef('invalid-parameter'),
      500: problemRef('internal'),
    },
  };
}

function assetOperation(): SchemaObject {
  return {
    operationId: 'getDocsAsset',
    tags: ['Documentation'],
    summary: 'Script and style of the documentation page (Swagger UI, served by this service)',
    security: NO_KEY,
    parameters: [{ name: 'asset', in: 'path', required: true, schema: { type: 'string', enum: Object.keys(docsAssets()) } }],
    responses: {
      200: { description: 'The file.', content: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } } } },
      404: problemRef('not-found'),
      500: problemRef('internal'),
    },
  };
}

/** The page's view state, read by its script (the server sends the same page whatever they hold). */
const VIEW_STATE = ['dataset', 'from', 'to', 'bbox'].map((name) => ({ name, in: 'query', required: false, description: `The view's ${name}, as the page put it in its URL; the dataset's filters go alongside under their own names. Read by the page's script, not by the server.`, schema: { type: 'string' } }));

function exploreOperation(): SchemaObject {
  return {
    operationId: 'getExplorePage',
    tags: ['Documentation'],
    summary: 'The explorer page: choose a dataset, a window, a box and filters; see counts, a map and a chart; download exactly that window',
    description: 'A page that holds no data, served without a key. Its scripts ask the aggregate and data endpoints with the key typed into the page (kept in the tab, sent as a bearer header, never in a URL); its view is in its own URL, so a shared URL shows the same view. Scripts, styles and the world outline come from this service.',
    security: NO_KEY,
    parameters: VIEW_STATE,
    responses: { 200: text('The page.', 'text/html'), 500: problemRef('internal') },
  };
}

const operating = (operationId: string, summary: string, response: SchemaObject, more: Record<number, SchemaObject> = {}): SchemaObject => ({
  get: { operationId, tags: ['Operations'], summary, security: NO_KEY, responses: { 200: response, ...more, 500: problemRef('internal') } },
});

/** The documentation and operating endpoints: no key, no data. */
export function otherPaths(): Record<string, SchemaObject> {
  return {
    '/api/v1/docs': { get: docsOperation() },
    '/api/v1/docs/assets/{asset}': { get: assetOperation() },
    [EXPLORE_PATH]: { get: exploreOperation() },
    '/healthz': operating('getHealth', 'The process is alive', json('Alive.', { $ref: componentRef('Health') })),
    // 503 takes the node out of a proxy's rotation: DATA_DIR unreadable, or no dataset available.
    '/readyz': operating('getReadiness', 'The engine and key registry are loaded; availability of each dataset, and its data files by check state', json('Ready: DATA_DIR is readable and at least one dataset is available (file checks still warming or not).', { $ref: componentRef('Readiness') }), {
      503: problemRef('unavailable'),
    }),
    '/metrics': operating('getMetrics', 'Prometheus metrics', text('Prometheus text exposition format 0.0.4.', 'text/plain')),
  };
}
