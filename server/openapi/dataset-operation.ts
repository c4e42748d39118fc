import type { z } from 'zod';
import { wireColumns, type DatasetDescriptor } from '../../datasets/index.ts';
import { csvHeader } from '../../queries/sql/compile.ts';
import { GEOMETRY_COLUMN, hasColumnarGeometry } from '../../queries/sql/compile-columnar.ts';
import { FORMATS } from '../../queries/formats.ts';
import { COLUMNAR_META_KEY } from '../../shared/wire.ts';
import { datasetQuerySchema } from '../params/query-params.ts';
import { dataHeaders } from './headers.ts';
import { problemResponseId } from './problem-schemas.ts';
import { datasetDescription } from './prose.ts';
import { componentRef, toOpenApiSchema, type SchemaObject } from './schema-convert.ts';

/** `sensor-readings` → `SensorReadings`: the prefix of a dataset's component ids. */
export const datasetSchemaPrefix = (d: DatasetDescriptor): string => d.name.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());

/** Query parameters straight from the zod object that validates them. */
export function queryParameters(schema: z.ZodObject): SchemaObject[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const { description, example, ...json } = toOpenApiSchema(field as z.ZodType, 'input');
    return { name, in: 'query', required: false, description, schema: json, ...(example === undefined ? {} : { example }) };
  });
}

const COLUMNAR_TYPE_NAMES: Record<string, string> = {
  VARCHAR: 'string',
  DOUBLE: 'double',
  INTEGER: 'int32',
  BIGINT: 'int64',
  BOOLEAN: 'boolean',
  TIMESTAMPTZ: 'timestamp (µs, UTC)',
};

export const IF_NONE_MATCH: SchemaObject = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'ETag of an earlier response to the same request; when the data has not changed the answer is 304 without a body.',
  schema: { type: 'string' },
};

export const problemRef = (kind: Parameters<typeof problemResponseId>[0]): SchemaObject => ({ $ref: `#/components/responses/${problemResponseId(kind)}` });

/** The problems every keyed route under /api/v1 may answer (data, aggregates, correction models). */
export function keyedRouteProblems(): Record<number, SchemaObject> {
  return {
    400: problemRef('invalid-parameter'),
    401: problemRef('unauthorized'),
    403: problemRef('forbidden'),
    408: problemRef('request-timeout'),
    429: problemRef('rate-limited'),
    431: problemRef('headers-too-large'),
    500: problemRef('internal'),
    503: problemRef('unavailable'),
  };
}

function csvMedia(d: DatasetDescriptor): SchemaObject {
  return {
    schema: {
      type: 'string',
      description: `CSV: one header row, then one line per record. Each column holds the property of the same name of [${datasetSchemaPrefix(d)}Properties](#/components/schemas/${datasetSchemaPrefix(d)}Properties); null is an empty field.`,
    },
    example: csvHeader(d),
    'x-csv-columns': wireColumns(d).map((c) => c.name),
  };
}

/** Parquet and Arrow bodies, chosen by Accept: binary, described from the descriptor (columns, types, geometry). */
function columnarMedia(d: DatasetDescriptor): Record<string, SchemaObject> {
  const columns = wireColumns(d).map((c) => `\`${c.name}\` ${COLUMNAR_TYPE_NAMES[c.type]}`);
  if (hasColumnarGeometry(d)) columns.push(`\`${GEOMETRY_COLUMN}\` WKB (CRS84)`);
  const list = columns.join(', ');
  const meta = `the \`meta\` block (without \`observation.ageSeconds\`) as JSON under the key \`${COLUMNAR_META_KEY}\``;
  const geo = hasColumnarGeometry(d) ? ` GeoParquet 1.1: \`geometry\` is WKB, CRS84, with \`geo\` file metadata (geometry types, bbox of the file).` : '';
  return {
    [FORMATS.parquet.mediaType]: {
      schema: { type: 'string', format: 'binary', description: `Parquet, sent with \`Accept: ${FORMATS.parquet.mediaType}\` (and no \`format=csv\`). Columns in CSV order: ${list}.${geo} Key-value metadata: ${meta}.` },
      'x-columns': columns,
    },
    [FORMATS.arrow.mediaType]: {
      schema: { type: 'string', format: 'binary', description: `Arrow IPC stream, sent with \`Accept: ${FORMATS.arrow.mediaType}\` (and no \`format=csv\`). Columns in CSV order: ${list}${hasColumnarGeometry(d) ? ' (`geometry` as the GeoArrow extension `geoarrow.wkb`)' : ''}. Schema metadata: ${meta}.` },
      'x-columns': columns,
    },
  };
}

/** GET /api/v1/<dataset>: parameters from the request schema, bodies from the wire schemas, every status it can answer. */
export function datasetOperation(d: DatasetDescriptor, folderValues: readonly string[]): SchemaObject {
  const prefix = datasetSchemaPrefix(d);
  return {
    operationId: `get${prefix}`,
    tags: ['Data'],
    summary: d.title,
    description: datasetDescription(d, folderValues),
    security: [{ bearerAuth: [] }, { basicAuth: [] }],
    parameters: [...queryParameters(datasetQuerySchema(d, folderValues)), IF_NONE_MATCH],
    responses: {
      200: {
        description:
          'The service looked: the rows in the window (possibly none), as GeoJSON with meta, as CSV with meta in the X- headers, or (by Accept) as Parquet or an Arrow IPC stream with meta in the X- headers and in the file\'s metadata.',
        headers: dataHeaders(d),
        content: { 'application/geo+json': { schema: { $ref: componentRef(`${prefix}FeatureCollection`) } }, 'text/csv': csvMedia(d), ...columnarMedia(d) },
      },
      304: { $ref: '#/components/responses/NotModified' },
      ...keyedRouteProblems(),
    },
  };
}
