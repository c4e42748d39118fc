import path from 'node:path';
import type { Column } from '../../datasets/index.ts';

/** Identifiers come only from descriptors; quoting still guards against a descriptor typo becoming SQL. */
export const ident = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** The one way a file path enters SQL: from our own listing (or temp files), checked to lie inside its root. */
export function quoteFilePath(file: string, rootDir: string, rootName = 'DATA_DIR'): string {
  return sqlString(filePathValue(file, rootDir, rootName));
}

/** A file's absolute path, refused unless it lies inside `rootDir`: as a value to bind. */
export function filePathValue(file: string, rootDir: string, rootName = 'DATA_DIR'): string {
  const root = path.resolve(rootDir) + path.sep;
  const resolved = path.resolve(file);
  if (!resolved.startsWith(root)) throw new Error(`file outside ${rootName}`);
  return resolved;
}

/** The column read_parquet adds with each row's file; a data file may not use this name itself. */
export const SOURCE_FILE_COLUMN = '__source_file';

/** `read_parquet` over the files bound as parameter `position` (a VARCHAR[]). */
export const readParquetBound = (position: number): string => `read_parquet($${position}::VARCHAR[], hive_partitioning = false)`;

export const readParquet = (files: readonly string[], dataDir: string, withFilename = false): string =>
  `read_parquet([${files.map((f) => quoteFilePath(f, dataDir)).join(', ')}], hive_partitioning = false${withFilename ? `, filename = '${SOURCE_FILE_COLUMN}'` : ''})`;

/** Epoch microseconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z: the years the API speaks. */
const FOUR_DIGIT_YEARS = { first: -62135596800000000n, last: 253402300799999999n };

/**
 * Timestamps on the wire: `YYYY-MM-DDTHH:MM:SSZ`, fraction only when non-zero. Built from epoch
 * microseconds, so neither the session time zone nor ICU's (slow) conversions are involved. For
 * years 0001–9999 DuckDB's own timestamp text has exactly this form with a space for the `T` and
 * is about twice as fast as strftime; other years keep the strftime form.
 */
export const timestampText = (expr: string): string => {
  const us = `epoch_us(${expr})`;
  const fast = `replace(CAST(make_timestamp(${us}) AS VARCHAR), ' ', 'T') || 'Z'`;
  const fraction = `rtrim('.' || lpad(CAST(((${us} % 1000000) + 1000000) % 1000000 AS VARCHAR), 6, '0'), '0')`;
  const general = `strftime(make_timestamp(${us}), '%Y-%m-%dT%H:%M:%S') || CASE WHEN ${us} % 1000000 = 0 THEN 'Z' ELSE ${fraction} || 'Z' END`;
  return `(CASE WHEN ${us} BETWEEN ${FOUR_DIGIT_YEARS.first} AND ${FOUR_DIGIT_YEARS.last} THEN ${fast} ELSE ${general} END)`;
};

/**
 * A double in shortest round-trip form, as JavaScript writes it: DuckDB already picks the
 * shortest digits but writes integral values as `100.0`; those become `100`. NaN and infinities
 * have no JSON form and become null (an empty CSV field), as in GeoJSON.
 */
export const numberText = (expr: string): string =>
  `CASE WHEN NOT isfinite(${expr}) THEN NULL WHEN ${expr} = trunc(${expr}) AND abs(${expr}) < 1e15 THEN CAST(CAST(${expr} AS BIGINT) AS VARCHAR) ELSE CAST(${expr} AS VARCHAR) END`;

/** One CSV field before the CSV writer quotes it: wire text for timestamps and doubles, the value otherwise. */
export function csvField(c: Column, expr: string): string {
  if (c.type === 'TIMESTAMPTZ') return timestampText(expr);
  if (c.type === 'DOUBLE') return numberText(expr);
  return expr;
}

/**
 * A double as JSON text: shortest round-trip digits in DuckDB's JSON form (`to_json`), integral
 * values under 1e15 without a fraction (`100`, not `100.0`; -0 is `0`), null, NaN and infinities
 * as `null`. These are the bytes GeoJSON properties have always had.
 */
const numberJson = (expr: string): string =>
  `CASE WHEN NOT isfinite(${expr}) THEN 'null' WHEN ${expr} = trunc(${expr}) AND abs(${expr}) < 1e15 THEN CAST(CAST(${expr} AS BIGINT) AS VARCHAR) ELSE coalesce(CAST(to_json(${expr}) AS VARCHAR), 'null') END`;

/**
 * A value as JSON text, null as `null`: timestamps as wire text (no character in it needs
 * escaping), doubles by numberJson, integers and booleans as DuckDB writes them, strings escaped
 * by DuckDB's JSON writer. Concatenated into a Feature this costs far less than json_object(),
 * which builds and serialises a JSON document per row.
 */
export function jsonText(c: Column, expr: string): string {
  if (c.type === 'TIMESTAMPTZ') return `coalesce('"' || ${timestampText(expr)} || '"', 'null')`;
  if (c.type === 'DOUBLE') return numberJson(expr);
  if (c.type === 'VARCHAR') return `coalesce(CAST(to_json(${expr}) AS VARCHAR), 'null')`;
  return `coalesce(CAST(${expr} AS VARCHAR), 'null')`;
}

/** A JSON literal for an SQL string constant, e.g. `'"geometry":'`. */
export const sqlString = (text: string): string => `'${text.replaceAll("'", "''")}'`;
