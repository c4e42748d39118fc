import { queryParams, type DatasetDescriptor } from '../datasets/index.ts';
import type { Format } from '../queries/compile.ts';
import type { Instant } from '../queries/instant.ts';
import { resolveWindow, type Window } from '../queries/window.ts';
import { invalidParameters, type ParameterError } from './problems.ts';

export interface DatasetQuery {
  window: Window | null;
  format: Format;
  filters: { column: string; value: string }[];
  folderValue: string | undefined;
  /** Wire-only choices in effect, defaults included (e.g. series). */
  params: Record<string, string>;
  /** Every non-window parameter in effect, defaults included, for meta.query. */
  echo: Record<string, string | null>;
}

const allowedParams = (d: DatasetDescriptor): Set<string> => new Set([...(d.time ? ['from', 'to'] : []), 'format', ...queryParams(d)]);

/** Unknown and repeated parameters are errors: a typo must never widen a result silently. */
function singleValues(d: DatasetDescriptor, raw: Record<string, unknown>, errors: ParameterError[]): Record<string, string> {
  const allowed = allowedParams(d);
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!allowed.has(name)) errors.push({ parameter: name, message: `unknown parameter; allowed: ${[...allowed].join(', ')}` });
    else if (Array.isArray(value)) errors.push({ parameter: name, message: 'must not be repeated' });
    else values[name] = String(value);
  }
  return values;
}

function parseFilters(d: DatasetDescriptor, v: Record<string, string>, q: DatasetQuery, errors: ParameterError[]): void {
  for (const f of d.filters) {
    const given = v[f.param];
    const parsed = given === undefined ? null : f.schema.safeParse(given);
    if (parsed && !parsed.success) {
      errors.push({ parameter: f.param, message: parsed.error.issues[0]?.message ?? 'invalid value' });
      continue;
    }
    const value = parsed ? parsed.data : f.defaultValue;
    q.echo[f.param] = value;
    if (value !== null) q.filters.push({ column: f.column, value });
  }
}

function parseOptions(d: DatasetDescriptor, v: Record<string, string>, q: DatasetQuery, errors: ParameterError[]): void {
  for (const o of d.options) {
    const value = v[o.param] ?? o.defaultValue;
    if (!o.allowed.includes(value)) errors.push({ parameter: o.param, message: `must be one of: ${o.allowed.join(', ')}` });
    q.params[o.param] = value;
    q.echo[o.param] = value;
  }
}

/** Validates a data request's query string against its dataset; throws a 400 problem naming each bad parameter. */
export function parseDatasetQuery(d: DatasetDescriptor, raw: Record<string, unknown>, now: Instant): DatasetQuery {
  const errors: ParameterError[] = [];
  const v = singleValues(d, raw, errors);
  const q: DatasetQuery = { window: null, format: v.format === 'csv' ? 'csv' : 'geojson', filters: [], folderValue: undefined, params: {}, echo: {} };
  if (d.time) {
    const w = resolveWindow(d, v.from, v.to, now);
    if (w.ok) q.window = w.window;
    else errors.push({ parameter: w.parameter, message: w.message });
  }
  if (d.folderChoice) {
    const given = v[d.folderChoice.param];
    if (given !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(given)) errors.push({ parameter: d.folderChoice.param, message: 'invalid value' });
    q.folderValue = given;
  }
  parseFilters(d, v, q, errors);
  parseOptions(d, v, q, errors);
  if (errors.length) throw invalidParameters(errors);
  return q;
}
