import { Binary, Field, Float64, Int64, makeData, RecordBatch, Schema, Struct, TimeUnit, Timestamp, Utf8, type Data, type DataType } from 'apache-arrow';
import type { Groups } from '../aggregate-groups.ts';
import { ARROW_BATCH_ROWS, ARROW_END_OF_STREAM, arrowSchemaMessage, batchMessage, GEOARROW } from '../../encode/arrow-ipc.ts';
import { GEOMETRY_COLUMN } from '../../sql/compile-columnar.ts';
import { wkbColumn } from './aggregate-geometry.ts';
import type { AggregateColumn, AggregateColumnType, AggregateRow } from '../aggregate-rows.ts';

/** How an aggregate's groups are written as one binary body, with `metadata` inside it. */
export interface AggregateBinary {
  kind: 'binary';
  /** `geometry`: the groups have geometry (hasGroupGeometry), written as a last column. */
  write(metadata: Readonly<Record<string, string>>, columns: readonly AggregateColumn[], groups: Groups, geometry: boolean): Iterable<Uint8Array>;
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
  if (type === 'text') return makeData({ ...common, type: new Utf8(), ...bytesOf(values.map((v) => (v === null ? null : Buffer.from(String(v))))) });
  if (type === 'double') return makeData({ ...common, type: new Float64(), data: Float64Array.from(values, (v) => (v === null ? 0 : Number(v))) });
  const data = BigInt64Array.from(values, (v) => (v === null ? 0n : BigInt(v)));
  return type === 'time' ? makeData({ ...common, type: new Timestamp(TimeUnit.MICROSECOND, 'UTC'), data }) : makeData({ ...common, type: new Int64(), data });
}

/** Variable-length values (a null as no bytes): offsets and one data buffer. */
function bytesOf(values: readonly (Buffer | null)[]): { valueOffsets: Int32Array; data: Buffer } {
  const valueOffsets = new Int32Array(values.length + 1);
  values.forEach((b, i) => (valueOffsets[i + 1] = valueOffsets[i]! + (b?.length ?? 0)));
  return { valueOffsets, data: Buffer.concat(values.filter((b) => b !== null)) };
}

/** The groups' geometry as WKB, null where a group has none: the data endpoints' GeoArrow column. */
function geometryData(rows: readonly AggregateRow[]): Data {
  const { offsets, data } = wkbColumn(rows.map((r) => r.geometry));
  return makeData({ type: new Binary(), length: rows.length, ...validity(rows.map((r) => r.geometry)), valueOffsets: offsets, data });
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
 * Groups with geometry add `geometry` last: WKB tagged `geoarrow.wkb` (CRS84), as the data endpoints.
 */
export const AGGREGATE_ARROW: AggregateBinary = {
  kind: 'binary',
  *write(metadata, columns, groups, geometry) {
    const keys = Object.keys(metadata).sort();
    const fields = columns.map((c) => new Field(c.name, TYPES[c.type](), c.type !== 'time' && c.type !== 'integer'));
    if (geometry) fields.push(new Field(GEOMETRY_COLUMN, new Binary(), true, GEOARROW));
    const schema = new Schema(fields, new Map(keys.map((k) => [k, metadata[k]!])));
    yield arrowSchemaMessage(schema);
    for (const rows of runs(groups)) {
      const children = columns.map((c, i) => columnData(c.type, rows.map((r) => r.values[i] ?? null)));
      if (geometry) children.push(geometryData(rows));
      yield batchMessage(new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children })));
    }
    yield ARROW_END_OF_STREAM;
  },
};
