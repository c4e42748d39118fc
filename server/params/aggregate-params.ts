import { z } from 'zod';
import type { AggregateKey, Aggregation, DatasetDescriptor } from '../../datasets/index.ts';
import type { Instant } from '../../queries/instant.ts';
import { CELL_SIZES, cellHundredths, INTERVALS, MAX_GROUP_KEYS, STAT_FUNCTIONS, type AggregateShape, type CellSize, type Interval, type Stat, type StatFunction } from '../../queries/aggregate/aggregate-shape.ts';
import type { ParameterError } from '../http/problems.ts';
import { datasetQuerySchema, parseQueryWith, type DatasetQuery } from './query-params.ts';

const declared = (d: DatasetDescriptor): Aggregation => {
  if (!d.aggregate) throw new Error(`${d.name} has no aggregate`);
  return d.aggregate;
};

/** Only text that could be a name is quoted back; anything else is hostile or a mistake. */
const shown = (item: string) => (/^[A-Za-z0-9._-]{1,64}$/.test(item) ? ` '${item}'` : '');

function listProblem(items: string[], max: number | null, allowed: string, check: (item: string) => string | null): string | null {
  for (const item of items) {
    const problem = check(item);
    if (problem) return problem;
  }
  const repeated = items.find((item, i) => items.indexOf(item) !== i);
  if (repeated !== undefined) return `${shown(repeated).trim() || 'a value'} is repeated; ${allowed}`;
  return max !== null && items.length > max ? `at most ${max} values; ${allowed}` : null;
}

/** A comma list: each item checked (a message, or null when it is fine), none twice, at most `max`. */
const commaList = (max: number | null, allowed: string, check: (item: string) => string | null) =>
  z
    .string()
    .superRefine((text, ctx) => {
      const message = listProblem(text.split(','), max, allowed, check);
      if (message) ctx.addIssue({ code: 'custom', message });
    })
    .transform((text) => text.split(','));

const keyList = (a: Aggregation) => a.keys.map((k) => k.name).join(', ');
const measureList = (a: Aggregation) => a.measures.join(', ');
const statsAllowed = (a: Aggregation) => `allowed: count, or <measure>.<${STAT_FUNCTIONS.join('|')}> with measure one of: ${measureList(a)}`;

function statProblem(d: DatasetDescriptor, a: Aggregation, item: string): string | null {
  if (item === 'count') return null;
  const dot = item.lastIndexOf('.');
  const [column, fn] = [item.slice(0, dot), item.slice(dot + 1)];
  if (dot > 0 && a.measures.includes(column) && (STAT_FUNCTIONS as readonly string[]).includes(fn)) return null;
  if (dot > 0 && d.columns.some((c) => c.name === column) && !a.measures.includes(column)) return `'${column}' is not a numeric measure; ${statsAllowed(a)}`;
  return `unknown stat${shown(item)}; ${statsAllowed(a)}`;
}

/** The aggregate's own parameters, added to the dataset's (so window, filters and their validation are the dataset's own). */
function aggregateShapeParams(d: DatasetDescriptor, a: Aggregation) {
  const hasGrid = a.keys.some((k) => k.kind === 'grid');
  const firstMeasure = a.measures[0] ?? '';
  return {
    interval: z
      .enum(INTERVALS, { error: `must be one of: ${INTERVALS.join(', ')}` })
      .default('day')
      .meta({ description: 'Time buckets: UTC calendar periods labelled by their start (week: ISO, Monday 00:00 UTC); `all`: one bucket, labelled by the window\'s start. A bucket cut by the window counts only the rows inside it.' }),
    groupBy: commaList(MAX_GROUP_KEYS, `allowed: ${keyList(a)}`, (k) => (a.keys.some((key) => key.name === k) ? null : `unknown key${shown(k)}; allowed: ${keyList(a)}`))
      .optional()
      .meta({ description: `Comma list of at most ${MAX_GROUP_KEYS} group keys, in the order the output shows them: ${keyList(a)}. A null key is a group of its own.`, example: a.keys[0]?.name }),
    ...(hasGrid
      ? { cell: z.enum(CELL_SIZES, { error: `must be one of: ${CELL_SIZES.join(', ')}` }).optional().meta({ description: `Grid cell size in degrees, required with groupBy=grid: ${CELL_SIZES.join(', ')}. Cells are aligned to (-180, -90); a point on a west or south edge is in that cell; longitude 180 and latitude 90 are in the last cell.` }) }
      : {}),
    stats: commaList(null, statsAllowed(a), (s) => statProblem(d, a, s))
      .optional()
      .meta({ description: `Comma list of statistics, in the order the output shows them: count (rows; always present, first unless placed) and <measure>.<fn>, fn one of ${STAT_FUNCTIONS.join(', ')}, over non-null values of a measure: ${measureList(a)}.`, example: `count,${firstMeasure}.sum` }),
  };
}

const schemas = new WeakMap<DatasetDescriptor, z.ZodObject>();

/** The query string of `/api/v1/<dataset>/aggregate` as one strict zod object: it validates requests and is what the OpenAPI document describes. */
export function aggregateQuerySchema(d: DatasetDescriptor, folderValues: readonly string[] = []): z.ZodObject {
  return datasetQuerySchema(d, folderValues).extend(aggregateShapeParams(d, declared(d)));
}

type AggregateData = {
  interval: Interval;
  groupBy?: string[];
  cell?: CellSize;
  stats?: string[];
};

/** `grid` and `cell` come together. */
function gridProblems(data: AggregateData): ParameterError[] {
  const grid = data.groupBy?.includes('grid') ?? false;
  if (grid && data.cell === undefined) return [{ parameter: 'cell', message: `required with groupBy=grid; one of: ${CELL_SIZES.join(', ')}` }];
  if (!grid && data.cell !== undefined) return [{ parameter: 'cell', message: 'only with groupBy=grid' }];
  return [];
}

function toStat(name: string): Stat {
  if (name === 'count') return { name };
  const dot = name.lastIndexOf('.');
  return { name, column: name.slice(0, dot), fn: name.slice(dot + 1) as StatFunction };
}

/** Validates an aggregate request; throws a 400 problem naming each bad parameter and what it allows. */
export function parseAggregateQuery(d: DatasetDescriptor, raw: Record<string, unknown>, now: Instant, accept?: string): { q: DatasetQuery; shape: AggregateShape } {
  const a = declared(d);
  const schema = schemas.get(d) ?? aggregateQuerySchema(d);
  schemas.set(d, schema);
  const { q, data } = parseQueryWith<AggregateData>(d, schema, raw, now, { accept, more: gridProblems });
  const names = data.stats ?? [];
  const stats = (names.includes('count') ? names : ['count', ...names]).map(toStat);
  const keys = (data.groupBy ?? []).map((name) => a.keys.find((k) => k.name === name)) as AggregateKey[];
  Object.assign(q.echo, { interval: data.interval, groupBy: data.groupBy?.join(',') ?? null });
  if (a.keys.some((k) => k.kind === 'grid')) q.echo.cell = data.cell ?? null;
  q.echo.stats = stats.map((s) => s.name).join(',');
  return { q, shape: { interval: data.interval, keys, cellHundredths: data.cell === undefined ? null : cellHundredths(data.cell), stats } };
}
