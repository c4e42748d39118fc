import type { WireMeta } from '../../../shared/wire.ts';
import { formatInstant } from '../../instant.ts';
import type { Groups } from '../aggregate-groups.ts';
import type { AggregateColumn, AggregateGeometry, AggregateRow } from '../aggregate-rows.ts';
import { countText, csvNumber, jsonNumber } from '../../encode/number-text.ts';

/** How an aggregate's groups are written as text: before them, each group, between and after them. */
export interface AggregateText {
  kind: 'text';
  prefix(meta: WireMeta, columns: readonly AggregateColumn[]): string;
  /** The writer of a group's text for these columns; `time` spells a bucket start (the same few starts recur on every row of a bucket). */
  rows(columns: readonly AggregateColumn[], time: (t: bigint) => string): (row: AggregateRow) => string;
  separator: string;
  suffix: string;
}

/** DuckDB's CSV writer quotes these (the data CSV's rule): an empty string, and any text holding a quote, comma, line break or `#`. */
const needsQuotes = /[",\n\r#]/;
const csvText = (s: string) => (s === '' || needsQuotes.test(s) ? `"${s.replaceAll('"', '""')}"` : s);

type Time = (t: bigint) => string;

/** A value's CSV text, by its column's type. */
const CSV_VALUE: Record<AggregateColumn['type'], (v: AggregateRow['values'][number], time: Time) => string> = {
  time: (v, time) => time(v as bigint),
  text: (v) => csvText(v as string),
  integer: (v) => (typeof v === 'number' ? countText(v) : String(v)),
  double: (v) => csvNumber(v as number) ?? '',
};

/** A value's JSON text, by its column's type. */
const JSON_VALUE: Record<AggregateColumn['type'], (v: AggregateRow['values'][number], time: Time) => string> = {
  time: (v, time) => `"${time(v as bigint)}"`,
  text: (v) => JSON.stringify(v),
  integer: (v) => (typeof v === 'number' ? countText(v) : String(v)),
  double: (v) => jsonNumber(v as number),
};

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
  rows: (columns, time) => {
    const spell = columns.map((c) => CSV_VALUE[c.type]);
    return (row) => {
      let line = '';
      for (let i = 0; i < spell.length; i++) {
        const v = row.values[i];
        line += (i === 0 ? '' : ',') + (v === null || v === undefined ? '' : spell[i]!(v, time));
      }
      return line + '\n';
    };
  },
  separator: '',
  suffix: '',
};

export const AGGREGATE_GEOJSON: AggregateText = {
  kind: 'text',
  prefix: (meta) => `{"type":"FeatureCollection","meta":${JSON.stringify(meta)},"features":[`,
  rows: (columns, time) => {
    // Each property's name, spelled once: `"name":`, after a comma but the first.
    const names = columns.map((c, i) => `${i === 0 ? '' : ','}${JSON.stringify(c.name)}:`);
    const spell = columns.map((c) => JSON_VALUE[c.type]);
    return (row) => {
      let properties = '';
      for (let i = 0; i < spell.length; i++) {
        const v = row.values[i];
        properties += names[i]! + (v === null || v === undefined ? 'null' : spell[i]!(v, time));
      }
      return `{"type":"Feature","geometry":${geometryJson(row.geometry)},"properties":{${properties}}}\n`;
    };
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
function* groupTexts(text: Pick<AggregateText, 'rows' | 'separator'>, columns: readonly AggregateColumn[], groups: Groups): Generator<string> {
  const row = text.rows(columns, bucketTexts());
  let first = true;
  for (const batch of groups.batches()) {
    if (batch.length === 0) continue;
    let body = first ? '' : text.separator;
    for (let i = 0; i < batch.length; i++) body += (i === 0 ? '' : text.separator) + row(batch[i]!);
    yield body;
    first = false;
  }
}

/**
 * The body a batch of groups at a time: prefix, the groups, suffix. The groups' text goes as bytes:
 * outside the JavaScript heap while it waits for the socket, so what waits is never promoted to the
 * heap's old space (and held there until its next full collection).
 */
export function* aggregateBody(text: AggregateText, meta: WireMeta, columns: readonly AggregateColumn[], groups: Groups): Generator<string | Buffer> {
  yield text.prefix(meta, columns);
  for (const part of groupTexts(text, columns, groups)) yield Buffer.from(part);
  if (text.suffix) yield text.suffix;
}

/** The groups as CSV, header included, a batch at a time: the text a columnar file is made from. */
export function* aggregateCsv(columns: readonly AggregateColumn[], groups: Groups): Generator<string> {
  yield csvHeader(columns);
  yield* groupTexts(AGGREGATE_CSV, columns, groups);
}
