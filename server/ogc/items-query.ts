import { z } from 'zod';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { MIN_INSTANT, parseInstant, type Instant } from '../../queries/instant.ts';
import type { Window } from '../../queries/window.ts';
import { horizontalBoxText } from '../params/bbox-param.ts';
import { invalidParameters, type ParameterError } from '../http/problems.ts';
import { datasetChoices, parameterErrors, type DatasetQuery } from '../params/query-params.ts';
import { cursorScope, decodeCursor, RESTART, type Cursor } from './cursor.ts';
import { fitsColumn } from './documents.ts';

/** Features per page when `limit` is not given. */
export const DEFAULT_LIMIT = 100;
/**
 * The most features a page holds. A larger `limit` is served as this one, not refused: OGC API –
 * Features 1.0.1 (/req/core/fc-limit-response-1) asks it of a server with a maximum.
 */
export const maxLimit = (rowLimit: number): number => Math.min(10_000, rowLimit);

/** The end of a walk with no `datetime`, or with an open end: later than any data can be. */
const END = parseInstant('9999-12-31')!;

/** The parameters only the OGC items endpoint has; the dataset's own (filters, bbox, options) are the v1 endpoint's. */
export const ogcItemsShape = (rowLimit: number) => ({
  // Any whole number from 1 (zod's int() stops at 2^53): the maximum is documented, and applied after the parse.
  limit: z.coerce
    .number()
    .min(1)
    .refine(Number.isInteger, 'must be a whole number')
    .default(DEFAULT_LIMIT)
    .meta({ type: 'integer', maximum: maxLimit(rowLimit), description: `Features per page, at most ${maxLimit(rowLimit)}: a larger limit is not an error, the page holds at most ${maxLimit(rowLimit)} features.` }),
  datetime: z.string().optional().meta({ description: 'An instant or a closed interval `start/end` (RFC 3339; `..` or nothing for an open end). No `datetime`: the whole collection, page by page.', example: '2025-08-01T00:00:00Z/2025-08-01T23:59:59Z' }),
  cursor: z.string().max(2000).optional().meta({ description: 'Where the walk continues: taken from a `next` link, never made by hand.' }),
  f: z.enum(['json', 'geojson', 'html']).optional().meta({ description: 'json or geojson: the page as GeoJSON; html: a page (no key needed) with a map and a table of these features, its key typed into the page. Without f, `Accept` decides by its weights: the page when text/html weighs more than every JSON type (as a browser\'s Accept does), else GeoJSON.' }),
});

export interface ItemsQuery {
  /** The page's query as the v1 pipeline takes it: window, filters (the cursor's key among them), options. */
  q: DatasetQuery;
  limit: number;
  /** The scope of this walk's cursors (see cursorScope). */
  scope: string;
  /** The parameters to repeat in the page's links (everything but `cursor`). */
  kept: Record<string, string>;
}

/** Every instant a collection can hold: a walk with no `datetime`. */
export const wholeTime = (): Window => ({ from: MIN_INSTANT, to: END });

/** `datetime` as our half-open window: an instant is [t, t + 1 µs); an interval's end is inclusive. */
export function datetimeWindow(text: string | undefined): Window | string {
  if (text === undefined) return wholeTime();
  const parts = text.split('/');
  if (parts.length > 2) return 'must be an instant or start/end';
  const open = (s: string) => s === '..' || s === '';
  // A lone `..` (or nothing) is not an instant: an open interval needs both sides.
  if (parts.length === 1 && open(parts[0]!)) return 'must be an instant or start/end (`..` for an open end needs the other side)';
  const bound = (s: string, whenOpen: Instant): Instant | null => (open(s) ? whenOpen : parseInstant(s));
  const from = bound(parts[0]!, MIN_INSTANT);
  const last = parts.length === 2 ? bound(parts[1]!, END - 1n) : from;
  if (from === null || last === null) return 'must be RFC 3339 date-times (e.g. 2025-08-01T00:00:00Z), one or two joined by /, with .. for an open end';
  if (from >= END || last >= END) return 'must lie before 9999-12-31T00:00:00Z';
  if (last < from) return 'the interval ends before it starts';
  return { from, to: last + 1n };
}

/** Whether a cursor's order key can be one of this dataset's: a time that parses (its own `from`), whole numbers for numeric columns. */
function keyFits(d: DatasetDescriptor, key: readonly string[], from: Instant | null): boolean {
  if (key.length !== d.orderBy.length) return false;
  return d.orderBy.every((name, i) => {
    const v = key[i]!;
    return name === d.time?.column ? parseInstant(v) === from : fitsColumn(d, name, v);
  });
}

/** The cursor's continuation laid over the window and filters, or the reason it does not fit. */
function applyCursor(d: DatasetDescriptor, q: DatasetQuery, c: Cursor): string | null {
  const time = d.time ? parseInstant(c.from ?? '') : null;
  if (d.time ? time === null || !q.window || time >= q.window.to : c.from !== null) return 'cursor: does not fit this query';
  if (c.after && !keyFits(d, c.after, time)) return 'cursor: does not fit this query';
  if (q.window && time !== null) q.window = { from: time > q.window.from ? time : q.window.from, to: q.window.to };
  if (c.after) q.filters.push({ kind: 'after', key: c.after });
  return null;
}

/** zod compiles an object schema on its first parse: one per row limit (the server has one). */
const ownSchemas = new Map<number, z.ZodObject<ReturnType<typeof ogcItemsShape>>>();
const ownSchema = (rowLimit: number) => ownSchemas.get(rowLimit) ?? ownSchemas.set(rowLimit, z.object(ogcItemsShape(rowLimit))).get(rowLimit)!;

/** Validates an items request: the OGC parameters, then the dataset's own as the v1 endpoint validates them. */
export function parseItemsQuery(d: DatasetDescriptor, raw: Record<string, unknown>, rowLimit: number): ItemsQuery {
  const schema = ownSchema(rowLimit);
  const own = schema.safeParse(raw);
  const rest = Object.fromEntries(Object.entries(raw).filter(([k]) => !(k in schema.shape)));
  const errors: ParameterError[] = own.success ? [] : parameterErrors(own.error, raw, Object.keys(schema.shape));
  const box = typeof rest.bbox === 'string' ? horizontalBoxText(rest.bbox) : null;
  if (box?.ok === false) errors.push({ parameter: 'bbox', message: box.message });
  if (box) rest.bbox = box.ok ? box.text : undefined;
  const choices = datasetChoices(d, rest, Object.keys(schema.shape));
  errors.push(...choices.errors);
  const datetime = own.success ? own.data.datetime : undefined;
  const window = d.time ? datetimeWindow(datetime) : datetime === undefined ? null : 'this collection has no time';
  if (typeof window === 'string') errors.push({ parameter: 'datetime', message: window });
  if (errors.length || !own.success) throw invalidParameters(errors);
  const q = { ...choices.q, window: window as Window | null };
  const kept = Object.fromEntries(Object.entries(raw).filter(([k, v]) => k !== 'cursor' && typeof v === 'string')) as Record<string, string>;
  const scope = cursorScope(d.name, kept);
  if (own.data.cursor !== undefined) {
    const c = decodeCursor(own.data.cursor, scope);
    const wrong = typeof c === 'string' ? c : applyCursor(d, q, c) && RESTART;
    if (wrong) throw invalidParameters([{ parameter: 'cursor', message: wrong }]);
  }
  const limit = Math.min(own.data.limit, maxLimit(rowLimit));
  Object.assign(q.echo, { limit: String(limit), datetime: datetime ?? null, cursor: own.data.cursor ?? null });
  return { q, limit, scope, kept };
}
