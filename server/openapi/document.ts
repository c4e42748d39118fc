import path from 'node:path';
import { z } from 'zod';
import { DATASETS } from '../../datasets/index.ts';
import { listKeyValues } from '../../queries/files/partitions.ts';
import { aggregateOperation, aggregateWireSchemas } from './aggregate-operation.ts';
import { correctionModelsId, correctionModelsSchema, correctionsOperation } from './corrections-operation.ts';
import { datasetOperation, datasetSchemaPrefix } from './dataset-operation.ts';
import { headerComponents, notModifiedHeaders, problemHeaders } from './headers.ts';
import { ogcPaths } from './ogc-operations.ts';
import { Health, otherPaths, Readiness } from './other-operations.ts';
import { PROBLEM_KIND_NAMES, problemResponses, problemSchema, problemSchemaId } from './problem-schemas.ts';
import { overview, type ProseLimits } from './prose.ts';
import { toComponentSchemas, type SchemaObject } from './schema-convert.ts';
import { datasetWireSchemas, MultiPolygon, Observation, Point, Polygon, TimeWindow } from './wire-schemas.ts';

export const API_TITLE = 'Research Read API';
export const API_VERSION = '1.0.0';

export interface DocumentInput extends ProseLimits {
  /** Values of each dataset's folder choice present in DATA_DIR now (e.g. fire-danger models), by dataset name. */
  folderValues: Readonly<Record<string, readonly string[]>>;
  /** PUBLIC_URL, the base every path is under; without it the document names the server it is read from (`/`). */
  publicUrl?: string | null;
}

/** Folder-choice values as the data has them at this moment; a dataset that cannot be listed has none. */
export async function listFolderValues(dataDir: string): Promise<Record<string, string[]>> {
  const entries = await Promise.all(
    DATASETS.filter((d) => d.folderChoice).map(async (d) => {
      const values = await listKeyValues(path.join(dataDir, d.name), d.folderChoice!.key, d.name).catch(() => []);
      return [d.name, values] as const;
    }),
  );
  return Object.fromEntries(entries);
}

/** Named schemas: registered once here so every use in the document is a `$ref` to one component. */
function componentRegistry() {
  const registry = z.registry<{ id: string }>();
  const shared = { Point, Polygon, MultiPolygon, TimeWindow, Observation, Health, Readiness };
  for (const [id, schema] of Object.entries(shared)) registry.add(schema, { id });
  for (const d of DATASETS) {
    const schemas = { ...datasetWireSchemas(d), ...(d.aggregate ? aggregateWireSchemas(d, d.aggregate) : {}) };
    for (const [suffix, schema] of Object.entries(schemas)) registry.add(schema, { id: `${datasetSchemaPrefix(d)}${suffix}` });
    if (d.correction) registry.add(correctionModelsSchema(d), { id: correctionModelsId(d) });
  }
  for (const kind of PROBLEM_KIND_NAMES) registry.add(problemSchema(kind), { id: problemSchemaId(kind) });
  return registry;
}

function components(): SchemaObject {
  return {
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: 'A research key issued by the operator: `Authorization: Bearer <key>`. Only the Authorization header is read, never the query string.' },
      basicAuth: {
        type: 'http',
        scheme: 'basic',
        description: 'The same key as the password of HTTP Basic authentication, with any user name (`curl -u any:<key>`, GDAL_HTTP_USERPWD, QGIS\'s Basic authentication): for programs that cannot send a bearer header. Same verdicts and the same rate limit as the bearer header.',
      },
    },
    schemas: toComponentSchemas(componentRegistry()),
    headers: headerComponents(),
    responses: {
      ...problemResponses(problemHeaders()),
      NotModified: { description: 'If-None-Match matched the current ETag: nothing changed, no body, no query ran.', headers: notModifiedHeaders() },
    },
  };
}

/** The whole contract, from the descriptors and the zod schemas that validate requests and describe responses. */
export function buildOpenApiDocument(input: DocumentInput): SchemaObject {
  const dataPaths = Object.fromEntries(
    DATASETS.flatMap((d) => {
      const folderValues = input.folderValues[d.name] ?? [];
      const own = [`/api/v1/${d.name}`, { get: datasetOperation(d, folderValues) }] as const;
      return d.aggregate ? [own, [`/api/v1/${d.name}/aggregate`, { get: aggregateOperation(d, d.aggregate, folderValues) }] as const] : [own];
    }),
  );
  const correctionPaths = Object.fromEntries(DATASETS.filter((d) => d.correction).map((d) => [`/api/v1/${d.name}/corrections`, { get: correctionsOperation(d) }]));
  return {
    openapi: '3.0.3',
    info: { title: API_TITLE, version: API_VERSION, description: overview(input) },
    servers: [{ url: input.publicUrl ?? '/' }],
    tags: [
      { name: 'Data', description: 'The five data endpoints and the aggregates of the four with a time axis: GeoJSON with meta, or CSV. Key required.' },
      { name: 'OGC API – Features', description: 'The same rows for GIS programs (QGIS, ArcGIS, GDAL/OGR): one collection per dataset, GeoJSON pages walked by `next` links. Key required, sent as a bearer header or as the Basic password.' },
      { name: 'Documentation', description: 'This contract and its page. No key.' },
      { name: 'Operations', description: 'Liveness, readiness and metrics for operators. No key, no data.' },
    ],
    paths: { ...dataPaths, ...correctionPaths, ...ogcPaths(input.rowLimit), ...otherPaths() },
    components: components(),
  };
}
