import type { DuckDBBlobValue, DuckDBDataChunk } from '@duckdb/node-api';
import type { Format } from './compile.ts';
import { wkbToGeoJson } from './wkb.ts';

/** Joins a chunk of DuckDB-encoded rows into response text (CSV lines or comma-separated Features). */
export function encodeChunk(chunk: DuckDBDataChunk, format: Format, first: boolean): string {
  if (format === 'csv') return (chunk.getColumnValues(0) as string[]).join('\n') + '\n';
  const lead = first ? '' : ',';
  if (chunk.columnCount === 1) return lead + (chunk.getColumnValues(0) as string[]).join(',');
  const heads = chunk.getColumnValues(0) as string[];
  const wkbs = chunk.getColumnValues(1) as (DuckDBBlobValue | null)[];
  const tails = chunk.getColumnValues(2) as string[];
  const features = new Array<string>(heads.length);
  for (let i = 0; i < heads.length; i++) features[i] = heads[i] + wkbToGeoJson(wkbs[i]?.bytes) + tails[i];
  return lead + features.join(',');
}
