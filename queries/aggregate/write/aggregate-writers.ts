import type { Format } from '../../formats.ts';
import { AGGREGATE_ARROW, type AggregateBinary } from './aggregate-arrow.ts';
import { AGGREGATE_PARQUET, type AggregateParquet } from './aggregate-parquet.ts';
import { AGGREGATE_CSV, AGGREGATE_GEOJSON, type AggregateText } from './aggregate-text.ts';

/** How an aggregate's groups are written: text around them, a binary body, or a Parquet file DuckDB writes. */
export type AggregateWriter = AggregateText | AggregateBinary | AggregateParquet;

/** The aggregate writer of each response format (formats.ts holds the rest of what a format means). */
export const AGGREGATE_WRITERS: Readonly<Record<Format, AggregateWriter>> = {
  csv: AGGREGATE_CSV,
  geojson: AGGREGATE_GEOJSON,
  parquet: AGGREGATE_PARQUET,
  arrow: AGGREGATE_ARROW,
};
