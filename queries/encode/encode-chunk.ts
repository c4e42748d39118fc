import type { DuckDBBlobValue, DuckDBDataChunk } from '@duckdb/node-api';
import { wkbToGeoJson } from '../sql/wkb.ts';

/** A chunk of a text format's rows as text, each row after the separator but the first row of the first chunk (`first`). */
export type ChunkEncoder = (chunk: DuckDBDataChunk, first: boolean) => string;

/**
 * Joins a chunk of (head, wkb, tail) rows into comma-separated GeoJSON Features: the one kind of
 * row that needs JavaScript, because DuckDB here cannot turn WKB into GeoJSON.
 */
export const encodeFeatureChunk: ChunkEncoder = (chunk, first) => {
  const heads = chunk.getColumnValues(0) as string[];
  const wkbs = chunk.getColumnValues(1) as (DuckDBBlobValue | null)[];
  const tails = chunk.getColumnValues(2) as string[];
  const features = new Array<string>(heads.length);
  for (let i = 0; i < heads.length; i++) features[i] = heads[i] + wkbToGeoJson(wkbs[i]?.bytes) + tails[i];
  return (first ? '' : ',') + features.join(',');
};
