import { Field, Float64, Int64, makeData, RecordBatch, Schema, Struct, TimeUnit, Timestamp, Utf8, type Data, type DataType } from 'apache-arrow';
import type { Groups } from './aggregate-groups.ts';
import { ARROW_BATCH_ROWS, ARROW_END_OF_STREAM, arrowSchemaMessage, batchMessage } from './arrow-ipc.ts';
import type { AggregateColumn, AggregateColumnType, AggregateRow } from './aggregate-rows.ts';

/** How an aggregate's groups are written as one binary body, with `metadata` inside it. */
export interface AggregateBinary {
  kind: 'binary';
  write(metadata: Readonly<Record<string, string>>, columns: readonly AggregateColumn[], groups: Groups): Iterable<Uint8Array>;
}

const TYPES: Record<AggregateColumnType, () => DataType> = {
  time: () => new Timestamp(TimeUnit.MICROSECOND, 'UTC'),
  text: () => new Utf8(),
  integer: () => new Int64(),
  double: () => new Float64(),
};

/** The validity bitmap of `values` (bit set: not null), and how many are null. */
function validity(values: readonly unknown[]): { nullBitmap: Uint8Array; nullCount: number } {
  const nullBitmap = new Uint8Array(Math.ceil(values.length / 8));
  let nullCount = 0;
  values.forEach((v, i) => {
    if (v === null) nullCount++;
    else nullBitmap[i >> 3]! |= 1 << (i & 7);
  });
  return { nullBitmap, nullCount };
}

/** One column's values as Arrow data of its type. */
function columnData(type: AggregateColumnType, values: readonly AggregateRow['values'][number][]): Data {
  const common = { type: TYPES[type](), length: values.length, ...validity(values) };
  if (type === 'text') {
    const bytes = values.map((v) => Buffer.from(v === null ? '' : String(v)));
    const valueOffsets = new Int32Array(values.length + 1);
    bytes.forEach((b, i) => (valueOffsets[i + 1] = valueOffsets[i]! + b.length));
    return makeData({ ...common, type: new Utf8(), valueOffsets, data: Buffer.concat(bytes) });
  }
  if (type === 'double') return makeData({ ...common, type: new Float64(), data: Float64Array.from(values, (v) => (v === null ? 0 : Number(v))) });
  const data = BigInt64Array.from(values, (v) => (v === null ? 0n : BigInt(v)));
  return type === 'time' ? makeData({ ...common, type: new Timestamp(TimeUnit.MICROSECOND, 'UTC'), data }) : makeData({ ...common, type: new Int64(), data });
}

/** The groups in runs of ARROW_BATCH_ROWS (the last shorter): batch boundaries never depend on how the engine chunked them. */
function* runs(groups: Groups): Generator<AggregateRow[]> {
  let run: AggregateRow[] = [];
  for (const batch of groups.batches()) {
    for (const row of batch) {
      run.push(row);
      if (run.length < ARROW_BATCH_ROWS) continue;
      yield run;
      run = [];
    }
  }
  if (run.length > 0) yield run;
}

/**
 * An Arrow IPC stream of the groups: the CSV's columns with their types (the bucket a UTC
 * timestamp in microseconds, counts 64-bit integers, keys strings, stats and cell corners doubles),
 * record batches of ARROW_BATCH_ROWS groups, `metadata` on the schema; written a batch at a time.
 */
export const AGGREGATE_ARROW: AggregateBinary = {
  kind: 'binary',
  *write(metadata, columns, groups) {
    const keys = Object.keys(metadata).sort();
    const schema = new Schema(
      columns.map((c) => new Field(c.name, TYPES[c.type](), c.type !== 'time' && c.type !== 'integer')),
      new Map(keys.map((k) => [k, metadata[k]!])),
    );
    yield arrowSchemaMessage(schema);
    for (const rows of runs(groups)) {
      const children = columns.map((c, i) => columnData(c.type, rows.map((r) => r.values[i] ?? null)));
      yield batchMessage(new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children })));
    }
    yield ARROW_END_OF_STREAM;
  },
};
