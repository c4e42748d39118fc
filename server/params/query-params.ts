import { z } from 'zod';
import { CORRECTION_MODEL_ID } from '../../datasets/correction-model.ts';
import type { ColumnFilter, CorrectionLayer, DatasetDescriptor } from '../../datasets/index.ts';
import type { Box } from '../../queries/sql/box.ts';
import type { Format } from '../../queries/formats.ts';
import type { RowFilter } from '../../queries/sql/filter-sql.ts';
import { parseInstant, WINDOW_PATTERN, type Instant } from '../../queries/instant.ts';
import { resolveWindow, WINDOW_SYNTAX, type Window } from '../../queries/window.ts';
import { BboxParam, boxText } from './bbox-param.ts';
import { negotiateFormat } from '../http/media-types.ts';
import { invalidParameters, type ParameterError } from '../http/problems.ts';

export interface DatasetQuery {
  window: Window | null;
  format: Format;
  filters: RowFilter[];
  folderValue: string | undefined;
  /** Wire-only choices in effect, defaults included (e.g. series). */
  params: Record<string, string>;
  /** Every non-window parameter in effect, defaults included, for meta.query. */
  echo: Record<string, string | null>;
}

const windowBound = (d: DatasetDescriptor, bound: 'from' | 'to') =>
  z
    .string()
    .regex(WINDOW_PATTERN, WINDOW_SYNTAX)
    .refine((s) => parseInstant(s) !== null, WINDOW_SYNTAX)
    .optional()
    .meta({
      description:
        bound === 'from'
          ? `Start of the half-open window [from, to), inclusive. A bare date is 00:00 UTC; no offset means UTC. Default: to minus ${d.time?.defaultDays ?? 1} day(s).`
          : 'End of the half-open window [from, to), exclusive. A bare date is 00:00 UTC; no offset means UTC. Default: now (whole seconds).',
      example: bound === 'from' ? '2025-08-01' : '2025-08-02T00:00:00Z',
    });

const FormatParam = z
  .string()
  .default('geojson')
  .meta({
    description:
      '`csv` selects CSV (whatever `Accept` says); any other value, or none, gives GeoJSON, or Parquet / an Arrow IPC stream when `Accept` asks for `application/vnd.apache.parquet` / `application/vnd.apache.arrow.stream`.',
    example: 'csv',
  });

/**
 * The query string of a dataset endpoint as one strict zod object: it validates requests and is
 * what the OpenAPI document describes. `folderValues` (e.g. the models present in DATA_DIR) turn
 * the folder choice into an enum for the document; validation leaves that check to the preflight,
 * which lists the folder under the same lease as the query.
 */
export function datasetQuerySchema(d: DatasetDescriptor, folderValues: readonly string[] = []) {
  const shape: Record<string, z.ZodType> = {};
  if (d.time) Object.assign(shape, { from: windowBound(d, 'from'), to: windowBound(d, 'to') });
  shape.format = FormatParam;
  if (d.folderChoice) {
    const [first, ...rest] = folderValues;
    const known = first === undefined ? null : z.enum([first, ...rest]).default(first);
    // Any text passes here: the preflight compares it with the folders listed under the request's lease
    // (it never becomes a path unless listed) and its 400 names the valid values.
    shape[d.folderChoice.param] = (known ?? z.string().optional()).meta({ description: d.folderChoice.description });
  }
  for (const f of d.filters) shape[f.param] = filterParam(f);
  if (d.bbox) shape.bbox = BboxParam;
  for (const o of d.options) {
    const [first, ...rest] = o.allowed;
    if (first === undefined) throw new Error(`${d.name}: option ${o.param} allows nothing`);
    const allowed = z.enum([first, ...rest], { error: `must be one of: ${o.allowed.join(', ')}` });
    shape[o.param] = allowed.default(o.defaultValue as typeof first).meta({ description: o.description });
  }
  if (d.correction) shape[d.correction.param] = correctionParam(d.correction);
  return z.strictObject(shape);
}

/** Pins a correction model by id; whether it is published is the preflight's to say (its 400 lists those that are). */
const correctionParam = (layer: CorrectionLayer) =>
  z
    .string()
    .regex(CORRECTION_MODEL_ID, 'must be a correction model id (1-64 characters of A-Z a-z 0-9 . _ -)')
    .optional()
    .meta({
      description: `Only with ${layer.series.param}=${layer.series.value}: the correction model to apply, by id (GET /api/v1/sensor-readings/corrections lists them), so a cited extract gives the same values after newer models are published. Default: the latest published (meta.query echoes the one applied).`,
      example: 'humidity-bias-2025.1',
    });

/** A list filter takes `a,b,c`: each item validated, duplicates dropped, sorted (the order means nothing). */
const listParam = (f: ColumnFilter, maxItems: number) =>
  z
    .string()
    .min(1, 'must name at least one value')
    .transform((s) => s.split(','))
    .pipe(z.array(f.schema as z.ZodType<string, string>).max(maxItems, `at most ${maxItems} values`))
    .transform((items) => [...new Set(items)].sort());

function filterParam(f: ColumnFilter): z.ZodType {
  const meta = { description: f.description, ...(f.example === undefined ? {} : { example: f.example }) };
  if (f.list) return listParam(f, f.list.maxItems).optional().meta(meta);
  return (f.defaultValue === null ? f.schema.optional() : f.schema.default(f.defaultValue)).meta(meta);
}

/** One error per parameter: unknown and repeated parameters are errors, so a typo never widens a result. */
export function parameterErrors(error: z.ZodError, raw: Record<string, unknown>, allowed: readonly string[]): ParameterError[] {
  const errors = new Map<string, string>();
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) errors.set(k, allowed.length ? `unknown parameter; allowed: ${allowed.join(', ')}` : 'unknown parameter; this endpoint takes none');
      continue;
    }
    const name = String(issue.path[0] ?? '');
    if (!errors.has(name)) errors.set(name, Array.isArray(raw[name]) ? 'must not be repeated' : issue.message);
  }
  return [...errors].map(([parameter, message]) => ({ parameter, message }));
}

/** The choices into `q`; what is wrong only in combination (a model pinned on the raw series) comes back as errors. */
function resolveChoices(d: DatasetDescriptor, v: Record<string, unknown>, q: DatasetQuery): ParameterError[] {
  if (d.folderChoice) q.folderValue = v[d.folderChoice.param] as string | undefined;
  for (const f of d.filters) {
    const value = (v[f.param] as string | string[] | undefined) ?? null;
    q.echo[f.param] = Array.isArray(value) ? value.join(',') : value;
    if (Array.isArray(value)) q.filters.push({ kind: 'anyOf', column: f.column, values: value });
    else if (value !== null) q.filters.push({ kind: 'equals', column: f.column, value });
  }
  if (d.bbox) {
    const box = (v.bbox as Box | undefined) ?? null;
    q.echo.bbox = box && boxText(box);
    if (box) q.filters.push({ kind: 'box', box, shapes: null });
  }
  for (const o of d.options) {
    q.params[o.param] = v[o.param] as string;
    q.echo[o.param] = v[o.param] as string;
  }
  const layer = d.correction;
  const pinned = layer && (v[layer.param] as string | undefined);
  if (!layer || pinned === undefined) return [];
  if (q.params[layer.series.param] !== layer.series.value) return [{ parameter: layer.param, message: `applies to ${layer.series.param}=${layer.series.value} only: the raw series is never corrected` }];
  q.params[layer.param] = pinned;
  return [];
}

/** zod compiles an object schema on its first parse (~0.25 ms): build each dataset's validator once, not per request. */
const validators = new WeakMap<DatasetDescriptor, ReturnType<typeof datasetQuerySchema>>();

/** The dataset's own parameters (filters, bbox, options, folder choice): everything but the window and the format. */
export function datasetOwnSchema(d: DatasetDescriptor) {
  const cached = ownSchemas.get(d);
  if (cached) return cached;
  const own = z.strictObject(Object.fromEntries(Object.entries(datasetQuerySchema(d).shape).filter(([k]) => k !== 'from' && k !== 'to' && k !== 'format')));
  ownSchemas.set(d, own);
  return own;
}
const ownSchemas = new WeakMap<DatasetDescriptor, z.ZodObject>();

/**
 * The dataset's own parameters as another endpoint takes them (OGC items): validated as the v1
 * endpoint validates them, unknown ones named with `otherAllowed` among the allowed. GeoJSON, no window yet.
 */
export function datasetChoices(d: DatasetDescriptor, raw: Record<string, unknown>, otherAllowed: readonly string[]): { q: DatasetQuery; errors: ParameterError[] } {
  const schema = datasetOwnSchema(d);
  const parsed = schema.safeParse(raw);
  const q: DatasetQuery = { window: null, format: 'geojson', filters: [], folderValue: undefined, params: {}, echo: {} };
  if (!parsed.success) return { q, errors: parameterErrors(parsed.error, raw, [...otherAllowed, ...Object.keys(schema.shape)]) };
  return { q, errors: resolveChoices(d, parsed.data, q) };
}

/**
 * Validates a query string with `schema` (a dataset's, or one built on it): window, format
 * negotiated with `accept`, and the dataset's own parameters; throws a 400 problem naming each bad
 * parameter, with those `more` finds in what parsed.
 */
export function parseQueryWith<T extends Record<string, unknown>>(
  d: DatasetDescriptor,
  schema: z.ZodObject,
  raw: Record<string, unknown>,
  now: Instant,
  r: { accept?: string | undefined; more?: (data: T) => ParameterError[] } = {},
): { q: DatasetQuery; data: T } {
  const parsed = schema.safeParse(raw);
  const errors = parsed.success ? [] : parameterErrors(parsed.error, raw, Object.keys(schema.shape));
  const q: DatasetQuery = { window: null, format: negotiateFormat(raw.format === 'csv' ? 'csv' : 'geojson', r.accept), filters: [], folderValue: undefined, params: {}, echo: {} };
  if (d.time && !errors.some((e) => e.parameter === 'from' || e.parameter === 'to')) {
    const w = resolveWindow(d, raw.from as string | undefined, raw.to as string | undefined, now);
    if (w.ok) q.window = w.window;
    else errors.push({ parameter: w.parameter, message: w.message });
  }
  if (parsed.success && r.more) errors.push(...r.more(parsed.data as T));
  if (errors.length || !parsed.success) throw invalidParameters(errors);
  const combined = resolveChoices(d, parsed.data, q);
  if (combined.length) throw invalidParameters(combined);
  return { q, data: parsed.data as T };
}

/** Validates a data request's query string against its dataset (the format negotiated with `accept`); throws a 400 problem naming each bad parameter. */
export function parseDatasetQuery(d: DatasetDescriptor, raw: Record<string, unknown>, now: Instant, accept?: string): DatasetQuery {
  const schema = validators.get(d) ?? datasetQuerySchema(d);
  validators.set(d, schema);
  return parseQueryWith(d, schema, raw, now, { accept }).q;
}
