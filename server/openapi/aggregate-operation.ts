import { z } from 'zod';
import type { Aggregation, DatasetDescriptor } from '../../datasets/index.ts';
import { FORMATS } from '../../queries/formats.ts';
import { CELL_SIZES, INTERVALS, STAT_FUNCTIONS } from '../../queries/aggregate/aggregate-shape.ts';
import { COLUMNAR_META_KEY } from '../../shared/wire.ts';
import { aggregateQuerySchema } from '../params/aggregate-params.ts';
import { dataHeaders } from './headers.ts';
import { datasetSchemaPrefix, IF_NONE_MATCH, keyedRouteProblems, queryParameters } from './dataset-operation.ts';
import { componentRef, type SchemaObject } from './schema-convert.ts';
import { metaSchema, Point, Polygon, UtcTimestamp } from './wire-schemas.ts';

const hasKey = (a: Aggregation, kind: 'grid' | 'station') => a.keys.some((k) => k.kind === kind);

/** meta.query of an aggregate: the dataset's parameters and the aggregate's own. */
function aggregateEcho(a: Aggregation): Record<string, z.ZodType<string | null>> {
  return {
    interval: z.enum(INTERVALS),
    groupBy: z.string().nullable().meta({ description: 'The group keys asked for, in order; null when none (one group per bucket).' }),
    stats: z.string().meta({ description: 'The stats in output order, `count` always among them.' }),
    ...(hasKey(a, 'grid') ? { cell: z.enum(CELL_SIZES).nullable().meta({ description: 'The grid cell size; null without groupBy=grid.' }) } : {}),
  };
}

function geometry(a: Aggregation): z.ZodType {
  if (hasKey(a, 'grid')) return Polygon.nullable().meta({ description: "With groupBy=grid: the cell (CRS84, counter-clockwise from its south-west corner); null otherwise, and for the group of positions outside the grid's range." });
  if (hasKey(a, 'station')) return Point.nullable().meta({ description: "With groupBy=stationId: the station's position, looked up in sensor-stations; null otherwise, or when the station is not in the registry." });
  return z.null().meta({ description: 'Always null: groups of this dataset are named by their keys.' });
}

/** The response schemas of a dataset's aggregate: its properties hold the bucket, the keys asked for and the stats by name. */
export function aggregateWireSchemas(d: DatasetDescriptor, a: Aggregation) {
  const properties = z
    .object({ bucket: UtcTimestamp.meta({ description: 'Start of the UTC calendar bucket (for interval=all: the window\'s start).' }) })
    .catchall(z.union([z.string(), z.number()]).nullable())
    .meta({ description: 'bucket, then the group keys in the order asked (grid as cellLon, cellLat: the cell\'s south-west corner), then the stats under their names (count, frp.sum, ...). A null key is a group of its own; a stat over no finite values is null.' });
  const feature = z.object({ type: z.literal('Feature'), geometry: geometry(a), properties });
  const meta = metaSchema(d, aggregateEcho(a), { rows: 'groups', limit: 'AGGREGATE_ROW_LIMIT', stuck: 'the first bucket alone has more than rowLimit groups' });
  const collection = z
    .object({ type: z.literal('FeatureCollection'), meta, features: z.array(feature) })
    .meta({ description: `GeoJSON FeatureCollection of ${d.name} groups, one Feature per non-empty group, ordered by bucket then keys (nulls last), with the meta block written before features.` });
  return { AggregateProperties: properties, AggregateFeature: feature, AggregateMeta: meta, AggregateCollection: collection };
}

const escape = (name: string) => name.replace(/[.]/g, '\\.');

/** The CSV header row of any aggregate of `a`: `bucket`, up to three keys (grid as two columns), then the stats. */
export function aggregateCsvPattern(a: Aggregation): string {
  const keys = a.keys.map((k) => (k.kind === 'grid' ? 'cellLon,cellLat' : escape(k.name))).join('|');
  const stats = `count|(?:${a.measures.map(escape).join('|')})\\.(?:${STAT_FUNCTIONS.join('|')})`;
  return `^bucket(?:,(?:${keys})){0,3}(?:,(?:${stats}))+$`;
}

function csvMedia(a: Aggregation): SchemaObject {
  return {
    schema: { type: 'string', description: 'CSV: the header `bucket`, the keys asked for (grid as `cellLon,cellLat`), the stats asked for; one line per group; null is an empty field.' },
    example: `bucket,${a.keys[0]?.name ?? ''},count\n`,
    'x-csv-header-pattern': aggregateCsvPattern(a),
  };
}

const COLUMNS = 'the CSV\'s columns, `bucket` a UTC timestamp (µs), counts int64, keys strings, stats and cell corners doubles';
const META = `the \`meta\` block (without \`observation.ageSeconds\`) as JSON under \`${COLUMNAR_META_KEY}\``;

/** The geometry column of the groups of `a` that have one (grid cells, stations), written as the data endpoints' (none otherwise). */
function geometryColumn(a: Aggregation): { parquet: string; arrow: string } {
  const which = [hasKey(a, 'grid') ? 'groupBy=grid (the cell\'s polygon)' : null, hasKey(a, 'station') ? 'groupBy=stationId (the station\'s point)' : null].filter(Boolean).join(' or ');
  if (!which) return { parquet: '', arrow: '' };
  const column = `; with ${which} a last column \`geometry\`: WKB, CRS84, null where the GeoJSON geometry is null`;
  return { parquet: `${column} (GeoParquet 1.1 \`geo\` metadata with the geometry types and bbox)`, arrow: `${column} (GeoArrow \`geoarrow.wkb\`)` };
}

/** Parquet and Arrow bodies of an aggregate, chosen by Accept. */
function columnarMedia(a: Aggregation): Record<string, SchemaObject> {
  const geometry = geometryColumn(a);
  return {
    [FORMATS.parquet.mediaType]: { schema: { type: 'string', format: 'binary', description: `Parquet, sent with \`Accept: ${FORMATS.parquet.mediaType}\` (and no \`format=csv\`): ${COLUMNS}${geometry.parquet}; ${META} in the key-value metadata.` } },
    [FORMATS.arrow.mediaType]: { schema: { type: 'string', format: 'binary', description: `Arrow IPC stream, sent with \`Accept: ${FORMATS.arrow.mediaType}\` (and no \`format=csv\`): ${COLUMNS}${geometry.arrow}; ${META} in the schema metadata.` } },
  };
}

/** GET /api/v1/<dataset>/aggregate: the dataset's parameters and the aggregate's, every status the dataset's endpoint answers. */
export function aggregateOperation(d: DatasetDescriptor, a: Aggregation, folderValues: readonly string[]): SchemaObject {
  const prefix = datasetSchemaPrefix(d);
  return {
    operationId: `get${prefix}Aggregate`,
    tags: ['Data'],
    summary: `${d.title}: aggregates`,
    description: `Exact counts and statistics of ${d.name} per UTC time bucket and group, over the same window and filters as \`/api/v1/${d.name}\` (a group's count is the rows that endpoint returns for it). Sums and means are the correctly rounded values of the exact sums of the stored numbers, the same whatever the engine's threads or the files' order. At most AGGREGATE_ROW_LIMIT groups, cut on a bucket boundary (\`next.from\`). GeoJSON, CSV with format=csv, or Parquet or an Arrow IPC stream by Accept.`,
    security: [{ bearerAuth: [] }, { basicAuth: [] }],
    parameters: [...queryParameters(aggregateQuerySchema(d, folderValues)), IF_NONE_MATCH],
    responses: {
      200: {
        description: 'The service looked: one group per non-empty (bucket, keys), possibly none, as GeoJSON with meta, as CSV with meta in the X- headers, or (by Accept) as Parquet or an Arrow IPC stream with meta in the X- headers and the file\'s metadata.',
        headers: dataHeaders(d),
        content: { [FORMATS.geojson.mediaType]: { schema: { $ref: componentRef(`${prefix}AggregateCollection`) } }, 'text/csv': csvMedia(a), ...columnarMedia(a) },
      },
      304: { $ref: '#/components/responses/NotModified' },
      ...keyedRouteProblems(),
    },
  };
}
