import path from 'node:path';
import type { Column } from '../datasets/index.ts';

/** Identifiers come only from descriptors; quoting still guards against a descriptor typo becoming SQL. */
export const ident = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** The one way a file path enters SQL: from our own listing, checked to lie inside DATA_DIR. */
export function quoteFilePath(file: string, dataDir: string): string {
  const root = path.resolve(dataDir) + path.sep;
  const resolved = path.resolve(file);
  if (!resolved.startsWith(root)) throw new Error('file outside DATA_DIR');
  return `'${resolved.replaceAll("'", "''")}'`;
}

export const readParquet = (files: readonly string[], dataDir: string, withFilename = false): string =>
  `read_parquet([${files.map((f) => quoteFilePath(f, dataDir)).join(', ')}], hive_partitioning = false${withFilename ? ', filename = true' : ''})`;

/** Timestamps on the wire: `YYYY-MM-DDTHH:MM:SSZ`, fraction only when non-zero, whatever the session time zone. */
export const timestampText = (expr: string): string =>
  `(rtrim(rtrim(strftime(${expr} AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%f'), '0'), '.') || 'Z')`;

/** RFC 4180: quote a field only when it holds a comma, quote or line break. */
const csvString = (expr: string): string =>
  `CASE WHEN regexp_matches(${expr}, '[",\\r\\n]') THEN '"' || replace(${expr}, '"', '""') || '"' ELSE ${expr} END`;

/**
 * A double in shortest round-trip form, as JavaScript writes it: DuckDB already picks the
 * shortest digits but writes integral values as `100.0`; those become `100`.
 */
export const numberText = (expr: string): string =>
  `CASE WHEN ${expr} = trunc(${expr}) AND abs(${expr}) < 1e15 THEN CAST(CAST(${expr} AS BIGINT) AS VARCHAR) ELSE CAST(${expr} AS VARCHAR) END`;

/** One CSV field; used inside concat(), which turns null into an empty field. */
export function csvField(c: Column, expr: string): string {
  if (c.type === 'VARCHAR') return csvString(expr);
  if (c.type === 'TIMESTAMPTZ') return timestampText(expr);
  if (c.type === 'DOUBLE') return numberText(expr);
  return `CAST(${expr} AS VARCHAR)`;
}

/** A value for json_object(): timestamps as wire text, doubles as shortest JSON numbers, non-finite as null. */
export function jsonValue(c: Column, expr: string): string {
  if (c.type === 'TIMESTAMPTZ') return timestampText(expr);
  if (c.type === 'DOUBLE') return `CASE WHEN isfinite(${expr}) THEN (${numberText(expr)})::JSON END`;
  return expr;
}

/** A JSON literal for an SQL string constant, e.g. `'"geometry":'`. */
export const sqlString = (text: string): string => `'${text.replaceAll("'", "''")}'`;
