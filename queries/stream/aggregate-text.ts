import type { WireMeta } from '../../shared/wire.ts';
import { formatInstant } from '../instant.ts';
import type { Groups } from './aggregate-groups.ts';
import type { AggregateColumn, AggregateGeometry, AggregateRow } from './aggregate-rows.ts';
import { csvNumber, jsonNumber } from './number-text.ts';

/** How an aggregate's groups are written as text: before them, each group, between and after them. */
export interface AggregateText {
  kind: 'text';
  prefix(meta: WireMeta, columns: readonly AggregateColumn[]): string;
  /** `time` spells a bucket start (the same few starts recur on every row of a bucket). */
  row(columns: readonly AggregateColumn[], row: AggregateRow, time: (t: bigint) => string): string;
  separator: string;
  suffix: string;
}

/** DuckDB's CSV writer quotes these (the data CSV's rule): an empty string, and any text holding a quote, comma, line break or `#`. */
const needsQuotes = /[",\n\r#]/;
const csvText = (s: string) => (s === '' || needsQuotes.test(s) ? `"${s.replaceAll('"', '""')}"` : s);

type Time = (t: bigint) => string;

function csvValue(c: AggregateColumn, v: AggregateRow['values'][number], time: Time): string {
  if (v === null) return '';
  if (c.type === 'time') return time(v as bigint);
  if (c.type === 'text') return csvText(String(v));
  if (c.type === 'integer') return String(v);
  return csvNumber(v as number) ?? '';
}

function jsonValue(c: AggregateColumn, v: AggregateRow['values'][number], time: Time): string {
  if (v === null) return 'null';
  if (c.type === 'time') return `"${time(v as bigint)}"`;
  if (c.type === 'text') return JSON.stringify(v);
  if (c.type === 'integer') return String(v);
  return jsonNumber(v as number);
}

function geometryJson(g: AggregateGeometry): string {
  if (g === null) return 'null';
  const position = ([x, y]: [number, number]) => `[${jsonNumber(x)},${jsonNumber(y)}]`;
  if (g.type === 'Point') return `{"type":"Point","coordinates":${position(g.coordinates)}}`;
  return `{"type":"Polygon","coordinates":[${g.coordinates.map((ring) => `[${ring.map(position).join(',')}]`).join(',')}]}`;
}

const csvHeader = (columns: readonly AggregateColumn[]) => `${columns.map((c) => c.name).join(',')}\n`;

export const AGGREGATE_CSV: AggregateText = {
  kind: 'text',
  prefix: (_meta, columns) => csvHeader(columns),
  row: (columns, row, time) => `${row.values.map((v, i) => csvValue(columns[i]!, v, time)).join(',')}\n`,
  separator: '',
  suffix: '',
};

export const AGGREGATE_GEOJSON: AggregateText = {
  kind: 'text',
  prefix: (meta) => `{"type":"FeatureCollection","meta":${JSON.stringify(meta)},"features":[`,
  row: (columns, row, time) => {
    const properties = row.values.map((v, i) => `${JSON.stringify(columns[i]!.name)}:${jsonValue(columns[i]!, v, time)}`).join(',');
    return `{"type":"Feature","geometry":${geometryJson(row.geometry)},"properties":{${properties}}}\n`;
  },
  separator: ',',
  suffix: ']}\n',
};

/** Spells each bucket start once: rows of one bucket come together. */
function bucketTexts(): (t: bigint) => string {
  let last: { t: bigint; text: string } | null = null;
  return (t) => (last?.t === t ? last.text : (last = { t, text: formatInstant(t) }).text);
}

/** The groups' text, a batch at a time, `separator` between groups. */
function* groupTexts(text: Pick<AggregateText, 'row' | 'separator'>, columns: readonly AggregateColumn[], groups: Groups): Generator<string> {
  const time = bucketTexts();
  let first = true;
  for (const batch of groups.batches()) {
    if (batch.length === 0) continue;
    const rows = batch.map((r) => text.row(columns, r, time)).join(text.separator);
    yield first ? rows : text.separator + rows;
    first = false;
  }
}

/** The body a batch of groups at a time: prefix, the groups, suffix. */
export function* aggregateBody(text: AggregateText, meta: WireMeta, columns: readonly AggregateColumn[], groups: Groups): Generator<string> {
  yield text.prefix(meta, columns);
  yield* groupTexts(text, columns, groups);
  if (text.suffix) yield text.suffix;
}

/** The groups as CSV, header included, a batch at a time: the text a columnar file is made from. */
export function* aggregateCsv(columns: readonly AggregateColumn[], groups: Groups): Generator<string> {
  yield csvHeader(columns);
  yield* groupTexts(AGGREGATE_CSV, columns, groups);
}
