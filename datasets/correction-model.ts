import { z } from 'zod';
import { STATION_ID } from './station-filters.ts';

/** A model id is its file's name without `.json`: a plain name, so it is safe in a path, a header and a citation. */
export const CORRECTION_MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Rules one model may hold: each is a few bound values in every corrected query. */
export const MAX_CORRECTION_RULES = 1000;

/** `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`: the instants the API itself writes. */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?Z$/;

/** A real calendar instant (no 31 June, no hour 24). */
function isInstant(s: string): boolean {
  const m = INSTANT.exec(s);
  if (!m) return false;
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const date = new Date(Date.UTC(2000, mo - 1, d, h, mi, se));
  date.setUTCFullYear(y);
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d && date.getUTCHours() === h && date.getUTCMinutes() === mi && y > 0;
}

const Instant = z.string().refine(isInstant, 'must be a UTC instant YYYY-MM-DDTHH:MM:SS[.ffffff]Z');

/** Sorts like the instant it names (fractions padded): the overlap test, and which model is the latest. */
export const instantKey = (s: string): string => {
  const [whole, fraction = ''] = s.slice(0, -1).split('.');
  return `${whole}.${fraction.padEnd(6, '0')}`;
};

/** The file's schema; `quantities` are the measured columns a rule may correct. */
export function correctionModelSchema(quantities: readonly string[]) {
  const [first, ...rest] = quantities;
  if (first === undefined) throw new Error('a correction layer corrects at least one quantity');
  const Rule = z.strictObject({
    stationId: z.string().refine((s) => s === '*' || STATION_ID.test(s), 'must be * or a station id (1-64 characters of A-Z a-z 0-9 . _ : -)'),
    quantity: z.enum([first, ...rest], { error: `unknown quantity; one of: ${quantities.join(', ')}` }),
    fromUtc: Instant.nullable(),
    toUtc: Instant.nullable(),
    factor: z.number(),
    offset: z.number(),
  });
  return z.strictObject({
    id: z.string().regex(CORRECTION_MODEL_ID, 'must be 1-64 characters of A-Z a-z 0-9 . _ - (not starting with . _ -)'),
    publishedUtc: Instant,
    description: z.string().max(2000),
    rules: z.array(Rule).max(MAX_CORRECTION_RULES),
  });
}

export type CorrectionModel = z.infer<ReturnType<typeof correctionModelSchema>>;
export type CorrectionRule = CorrectionModel['rules'][number];

const overlaps = (a: CorrectionRule, b: CorrectionRule): boolean => {
  if (a.quantity !== b.quantity || (a.stationId !== b.stationId && a.stationId !== '*' && b.stationId !== '*')) return false;
  const before = (x: string | null, y: string | null) => x === null || y === null || instantKey(x) < instantKey(y);
  return before(a.fromUtc, b.toUtc) && before(b.fromUtc, a.toUtc);
};

/**
 * What is wrong with a parsed model besides its schema: an id other than its file's name, a rule
 * that ends before it starts, rules that overlap (two of them would apply to one reading). Empty
 * when nothing is.
 */
export function modelProblems(model: CorrectionModel, fileId: string): string[] {
  const problems: string[] = [];
  if (model.id !== fileId) problems.push(`id '${model.id}' is not the file's name ('${fileId}')`);
  model.rules.forEach((r, i) => {
    if (r.fromUtc !== null && r.toUtc !== null && instantKey(r.fromUtc) >= instantKey(r.toUtc)) problems.push(`rules[${i}]: fromUtc ${r.fromUtc} is not before toUtc ${r.toUtc}`);
    for (let j = 0; j < i; j++) if (overlaps(model.rules[j]!, r)) problems.push(`rules[${j}] and rules[${i}] overlap (${r.quantity}, station ${r.stationId === '*' ? model.rules[j]!.stationId : r.stationId})`);
  });
  return problems;
}

/** Rules naming a station the registry does not hold (they would correct nothing): `fire-api check` reports them. */
export const stationProblems = (model: CorrectionModel, stations: ReadonlySet<string>): string[] =>
  model.rules.flatMap((r, i) => (r.stationId !== '*' && !stations.has(r.stationId) ? [`rules[${i}]: unknown station ${r.stationId}`] : []));

/**
 * zod's complaints as one line each, with the path of the value. Unknown members are not named:
 * zod quotes them, and the lines reach /readyz, which is read without a key.
 */
export const schemaProblems = (error: z.ZodError): string[] =>
  error.issues.map((i) => `${i.path.length ? i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') : 'the model'}: ${i.code === 'unrecognized_keys' ? `${i.keys.length} unknown member(s)` : i.message}`);
