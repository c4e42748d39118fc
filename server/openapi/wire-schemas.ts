import { z } from 'zod';
import { wireColumns, type Column, type DatasetDescriptor } from '../../datasets/index.ts';
import type { Meta } from '../meta.ts';

/** The wire form of every timestamp: UTC, whole seconds, a fraction (≤ 6 digits) only when non-zero. */
export const UtcTimestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{0,5}[1-9])?Z$/)
  .meta({ format: 'date-time', example: '2025-08-01T10:00:00Z' });

const Position = z.array(z.number()).min(2).max(3).meta({ description: '[longitude, latitude] in degrees, CRS84' });
const Ring = z.array(Position).min(4).meta({ description: 'Closed linear ring: the first position is repeated at the end' });

export const Point = z.object({ type: z.literal('Point'), coordinates: Position });
export const Polygon = z.object({ type: z.literal('Polygon'), coordinates: z.array(Ring).min(1) });
export const MultiPolygon = z.object({ type: z.literal('MultiPolygon'), coordinates: z.array(z.array(Ring).min(1)).min(1) });

export const TimeWindow = z
  .object({ from: UtcTimestamp, to: UtcTimestamp })
  .meta({ description: 'Half-open time window [from, to): from inclusive, to exclusive.' });

export const Observation = z
  .object({
    chainRan: z.boolean().meta({ description: 'False when the feeding data chain has not reported a run (_chain.json absent or without lastRunUtc).' }),
    lastSuccessUtc: UtcTimestamp.nullable().meta({ description: 'Last successful run of the feeding chain; null when it never succeeded.' }),
    ageSeconds: z.int().min(0).nullable().meta({ description: 'Seconds since lastSuccessUtc at the time of the request; null when it never succeeded.', 'x-unit': 's' }),
  })
  .meta({ description: 'Whether the feeding data chain ran at all, and how old its last success is.' });

const DataVersion = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/)
  .meta({ description: 'Fingerprint of the content of the files read (their Parquet footers), and of the correction model a corrected series applies: same data, same version; a late file changes it.' });

const NON_FINITE = 'In GeoJSON, null also when the stored number is not finite (JSON has no NaN or Infinity).';

/** Values a column can take when a parameter decides them (series) or a filter pins them (level). */
const allowedValues = (c: Column, d: DatasetDescriptor): readonly string[] | undefined => {
  const computed = c.computed;
  if (computed?.kind === 'param') return d.options.find((o) => o.param === computed.param)?.allowed;
  // Only a filter that always applies (it has a default) pins the column; an optional one (simulated) does not.
  return d.filters.find((f) => f.column === c.name && f.defaultValue !== null)?.allowed;
};

const baseSchema = (c: Column, d: DatasetDescriptor): z.ZodType => {
  const allowed = allowedValues(c, d);
  const [first, ...rest] = allowed ?? [];
  if (first !== undefined) return z.enum([first, ...rest]);
  if (c.type === 'DOUBLE') return z.number();
  if (c.type === 'INTEGER') return z.int32();
  if (c.type === 'BIGINT') return z.int().meta({ format: 'int64' });
  if (c.type === 'BOOLEAN') return z.boolean();
  if (c.type === 'TIMESTAMPTZ') return UtcTimestamp;
  return z.string();
};

/** One wire column: type from the descriptor, nullability, unit (as `x-unit` and in words). */
export function columnSchema(c: Column, d: DatasetDescriptor): z.ZodType {
  const base = baseSchema(c, d);
  const nullable = c.nullable || c.type === 'DOUBLE';
  const sentences = [c.description.endsWith('.') ? c.description : `${c.description}.`];
  if (c.unit !== undefined) sentences.push(`Unit: ${c.unit}.`);
  if (c.type === 'DOUBLE' && !c.nullable) sentences.push(NON_FINITE);
  const description = sentences.join(' ');
  return (nullable ? base.nullable() : base).meta({ description, ...(c.unit === undefined ? {} : { 'x-unit': c.unit }) });
}

function propertiesSchema(d: DatasetDescriptor) {
  const shape = Object.fromEntries(wireColumns(d).map((c) => [c.name, columnSchema(c, d)]));
  return z.object(shape).meta({ description: `Every column of the ${d.name} dataset except geometry, in CSV column order.` });
}

function geometrySchema(d: DatasetDescriptor): z.ZodType {
  const g = d.geometry;
  if (g.kind === 'none') return z.null().meta({ description: 'Always null: the record is named by its attributes, not located by a geometry.' });
  if (g.kind === 'wkb') return z.union([Polygon, MultiPolygon]).nullable().meta({ description: 'The perimeter (CRS84); null when the stored geometry is empty.' });
  const where = g.kind === 'station' ? "the station's position, looked up in sensor-stations" : 'the position';
  return Point.nullable().meta({ description: `Point at ${where}; null when a coordinate is missing or not finite.` });
}

function featureSchema(d: DatasetDescriptor, properties: z.ZodType) {
  const idColumn = d.columns.find((c) => c.name === d.featureId);
  const id = idColumn ? { id: columnSchema({ ...idColumn, nullable: false }, d).meta({ description: `The record's ${idColumn.name}.` }) } : {};
  return z.object({ type: z.literal('Feature'), ...id, geometry: geometrySchema(d), properties });
}

/** meta.query: every non-window parameter in effect, defaults included (and those of another endpoint over the dataset, `extra`). */
function queryEchoSchema(d: DatasetDescriptor, extra: Record<string, z.ZodType<string | null>>) {
  const shape: Record<string, z.ZodType<string | null>> = {};
  for (const f of d.filters) {
    const [first, ...rest] = f.allowed ?? [];
    const value = first === undefined ? z.string() : z.enum([first, ...rest]);
    shape[f.param] = f.defaultValue === null ? value.nullable().meta({ description: `${f.param}; null when not given (no filter).` }) : value;
  }
  if (d.bbox) shape.bbox = z.string().nullable().meta({ description: 'The box as minLon,minLat,maxLon,maxLat in shortest number form; null when not given (no filter).' });
  for (const o of d.options) shape[o.param] = z.enum(o.allowed as [string, ...string[]]);
  if (d.folderChoice) shape[d.folderChoice.param] = z.string().meta({ description: `The ${d.folderChoice.param} served (the default when none was given).` });
  if (d.correction) {
    const { series } = d.correction;
    // Optional rather than nullable: a raw answer echoes exactly what it echoed before models existed
    // (on the wire an absent key is what Meta's record type already allows).
    shape[d.correction.param] = (z.string().optional() as unknown as z.ZodType<string | null>).meta({ description: `The correction model applied (${series.param}=${series.value}): the one pinned, else the latest published; absent on any other series or while none is published (so raw answers echo what they always did).` });
  }
  return z.object({ ...shape, ...extra }).meta({ description: 'Every parameter in effect other than the window, defaults included.' });
}

/** What meta's counts are counts of: rows of the dataset, or (for aggregates) groups. */
export interface MetaUnits {
  rows: string;
  limit: string;
  /** When a cut cannot be continued. */
  stuck: string;
}

export function metaSchema(d: DatasetDescriptor, extra: Record<string, z.ZodType<string | null>> = {}, units: MetaUnits = { rows: 'rows', limit: 'ROW_LIMIT', stuck: 'more than rowLimit rows share the first instant' }) {
  return z.object({
    dataset: z.literal(d.name),
    window: d.time ? TimeWindow.meta({ description: 'The window actually used, defaults resolved.' }) : z.null().meta({ description: 'Always null: this dataset has no time axis.' }),
    query: queryEchoSchema(d, extra),
    truncated: z.boolean().meta({ description: `True when more ${units.rows} matched than this response holds (see next).` }),
    rowLimit: z.int().min(1).meta({ description: `Most ${units.rows} one response holds (${units.limit}).` }),
    returned: z.int().min(0).meta({ description: `${units.rows[0]!.toUpperCase()}${units.rows.slice(1)} in this response.` }),
    next: TimeWindow.nullable().meta({ description: `When truncated: the window to request next (from=next.from). Null when not truncated, or when ${units.stuck}.` }),
    observation: Observation,
    dataVersion: DataVersion,
  });
}

/** The response schemas of one dataset; the collection is built from the others so the document can link them. */
export function datasetWireSchemas(d: DatasetDescriptor) {
  const properties = propertiesSchema(d);
  const feature = featureSchema(d, properties);
  const meta = metaSchema(d);
  const collection = z
    .object({ type: z.literal('FeatureCollection'), meta, features: z.array(feature) })
    .meta({ description: `GeoJSON FeatureCollection (RFC 7946) of ${d.name}, with the meta block written before features.` });
  return { Properties: properties, Feature: feature, Meta: meta, FeatureCollection: collection };
}

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Compile-time guard: the documented meta block and the one server/meta.ts builds cannot drift apart. */
export const META_MATCHES_WIRE: Same<z.infer<ReturnType<typeof metaSchema>>, Meta> = true;
