import { wireColumns, type Column, type DatasetDescriptor } from '../../datasets/index.ts';
import { ident, quoteFilePath } from './sql.ts';

/**
 * Rows per Parquet row group unless PARQUET_ROW_GROUP_ROWS says otherwise: pinned, so the bytes never
 * depend on DuckDB's defaults. DuckDB holds a row group in memory until it is full; on the bench's
 * year (two groups written at once) the peak RSS was 676 MB with DuckDB's default of 122,880, 497 MB
 * with 65,536 and 420 MB with 32,768, for 31.8, 32.7 and 34.0 bytes per row.
 */
export const COLUMNAR_ROWS_PER_GROUP = 65_536;

/** The name of the geometry column of a columnar response (GeoParquet's primary column). */
export const GEOMETRY_COLUMN = 'geometry';

/** Datasets whose rows carry their own geometry get a `geometry` column; readings (a station's point) do not. */
export const hasColumnarGeometry = (d: DatasetDescriptor): boolean => d.geometry.kind === 'point' || d.geometry.kind === 'wkb';

/**
 * The geometry as a GEOMETRY value: the stored WKB, or a point built as big-endian WKB from the
 * coordinates' IEEE bits (DuckDB core has no point constructor without the spatial extension; this
 * measured three times faster than parsing WKT and gives the same geometry, stored little-endian).
 */
function geometryValue(d: DatasetDescriptor, col: (name: string) => string): string {
  const g = d.geometry;
  if (g.kind === 'wkb') return col(g.column);
  if (g.kind !== 'point') throw new Error(`${d.name} has no geometry of its own`);
  const [lat, lon] = [col(g.latitude), col(g.longitude)];
  const bits = (x: string) => `CAST(CAST(CAST(${x} AS DOUBLE) AS BIT) AS BLOB)`;
  return `CASE WHEN isfinite(${lat}) AND isfinite(${lon}) THEN ST_GeomFromWKB(from_hex('0000000001') || ${bits(lon)} || ${bits(lat)}) END`;
}

/** How a columnar writer takes the values whose type it cannot take as they are. */
export interface ColumnarTypes {
  timestamp(value: string): string;
  geometry(value: string): string;
}

/** DuckDB's Parquet writer: timestamps stay timestamps, geometry stays GEOMETRY (GeoParquet). */
export const PARQUET_TYPES: ColumnarTypes = { timestamp: (v) => v, geometry: (g) => g };

/** Arrow batches are copied from DuckDB's vectors: timestamps as BIGINT epoch microseconds (Arrow's own bits), geometry as WKB. */
export const ARROW_TYPES: ColumnarTypes = { timestamp: (v) => `epoch_us(${v})`, geometry: (g) => `ST_AsWKB(${g})` };

/**
 * The select list of a columnar response: the wire columns in CSV order with their contract types
 * (`value` gives computed columns as VARCHAR, like CSV), then `geometry` where the dataset has one,
 * each as the writer's `types` take it.
 */
export function columnarFields(d: DatasetDescriptor, col: (name: string) => string, value: (c: Column) => string, types: ColumnarTypes): string {
  const typed = (c: Column) => (c.type === 'TIMESTAMPTZ' ? types.timestamp(value(c)) : value(c));
  const fields = wireColumns(d).map((c) => `${typed(c)} AS ${ident(c.name)}`);
  if (hasColumnarGeometry(d)) fields.push(`${types.geometry(geometryValue(d, col))} AS ${ident(GEOMETRY_COLUMN)}`);
  return fields.join(', ');
}

/** No rows, the same columns and types: the schema of a response with nothing in its window. */
export function compileEmptyColumnar(d: DatasetDescriptor): string {
  // Descriptor types are DuckDB's own type names.
  const fields = wireColumns(d).map((c) => `CAST(NULL AS ${c.type}) AS ${ident(c.name)}`);
  if (hasColumnarGeometry(d)) fields.push(`CAST(NULL AS GEOMETRY) AS ${ident(GEOMETRY_COLUMN)}`);
  return `SELECT ${fields.join(', ')} LIMIT 0`;
}

/**
 * One group as its own Parquet file, by DuckDB's writer. Everything the bytes could depend on is
 * pinned (row group size, compression, GeoParquet flavour); the file-level metadata DuckDB writes
 * (its version string, its `geo` block) is replaced when the groups' footers are combined.
 */
export function compileParquetCopy(rows: { sql: string; params: string[] }, target: string, tempDir: string, rowGroupRows: number) {
  const options = `FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 3, ROW_GROUP_SIZE ${rowGroupRows}, GEOPARQUET_VERSION 'V1'`;
  return { sql: `COPY (${rows.sql}) TO ${quoteFilePath(target, tempDir, 'TEMP_DIR')} (${options})`, params: rows.params };
}
