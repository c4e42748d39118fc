import { z } from 'zod';

/** Column types as DuckDB reports them for a Parquet file (DESCRIBE), the contract's types. */
export type ColumnType = 'VARCHAR' | 'DOUBLE' | 'INTEGER' | 'BIGINT' | 'BOOLEAN' | 'TIMESTAMPTZ' | 'GEOMETRY';

export interface Column {
  name: string;
  type: ColumnType;
  nullable: boolean;
  description: string;
  unit?: string;
  /**
   * Wire-only column: not read from the file, its value comes from the request.
   * `param` echoes a query parameter, `correctionModel` is the id of the correction model applied
   * (null when none is).
   */
  computed?: { kind: 'param'; param: string } | { kind: 'correctionModel' };
}

export type Geometry =
  | { kind: 'none' }
  | { kind: 'point'; latitude: string; longitude: string }
  | { kind: 'wkb'; column: string }
  /** The point of the station named by `stationId`, looked up in the sensor-stations dataset. */
  | { kind: 'station'; stationId: string };

export interface TimeAxis {
  column: string;
  /** Granularity of the partition key: `date=YYYY-MM-DD` or `month=YYYY-MM`. */
  partition: 'date' | 'month';
  /** Length of the default window ending now, when `from` is omitted. */
  defaultDays: number;
}

/** A filter parameter compared for equality with a column. */
export interface ColumnFilter {
  param: string;
  column: string;
  /** One value (or, for a list, one item): validated and normalised. */
  schema: z.ZodType<string>;
  description: string;
  /** Value in effect when the parameter is omitted; null means "no filter". */
  defaultValue: string | null;
  allowed?: readonly string[];
  /** The parameter takes a comma-separated list of at most `maxItems` values; a row matches any of them. */
  list?: { maxItems: number };
  example?: string;
}

/** A choice that selects a sub-folder `key=value` of the dataset (e.g. model=...). */
export interface FolderChoice {
  param: string;
  key: string;
  description: string;
}

/**
 * A key an aggregate may group by: a column's value, the cell of a point geometry's position on a
 * regular grid (`grid`), or a station (its point becomes the group's geometry).
 */
export type AggregateKey = { kind: 'column'; name: string; column: string } | { kind: 'grid'; name: string } | { kind: 'station'; name: string; column: string };

/** What `/aggregate` may group by and summarise: the keys asked for by name, and the numeric measures (DOUBLE columns). */
export interface Aggregation {
  keys: readonly AggregateKey[];
  measures: readonly string[];
}

export interface DatasetDescriptor {
  /** Path segment under /api/v1 and folder name under DATA_DIR. */
  name: string;
  title: string;
  description: string;
  /** Wire columns in CSV order (file columns plus computed ones). Geometry columns are not on the wire. */
  columns: readonly Column[];
  time: TimeAxis | null;
  orderBy: readonly string[];
  geometry: Geometry;
  /** Column whose value becomes the GeoJSON Feature `id`. */
  featureId: string | null;
  filters: readonly ColumnFilter[];
  /**
   * `bbox=minLon,minLat,maxLon,maxLat` (CRS84, edges included) is accepted: on the point for point
   * geometry, on the exact shape for WKB geometry.
   */
  bbox: boolean;
  folderChoice: FolderChoice | null;
  /** Choices that only change wire columns (e.g. series=raw|corrected). */
  options: readonly { param: string; allowed: readonly string[]; defaultValue: string; description: string }[];
  /** `GET /api/v1/<name>/aggregate`: its group keys and measures; null: the dataset has no aggregate endpoint. */
  aggregate: Aggregation | null;
  /** Versioned correction models (files in `_corrections/`) applied to measured columns of one series. */
  correction?: CorrectionLayer;
}

export interface CorrectionLayer {
  /** The option and value that ask for the corrected series (series=corrected). */
  series: { param: string; value: string };
  /** The parameter that pins a model by id. */
  param: string;
  /** The column a rule's stationId is compared with. */
  stationColumn: string;
  /** The columns a rule may correct. */
  quantities: readonly string[];
}

/** A code filter (country, area): matched case-insensitively, echoed and compared in upper case. */
export const codeFilter = (param: string, column: string, pattern: RegExp, message: string, description: string, example: string): ColumnFilter => ({
  param,
  column,
  schema: z
    .string()
    .regex(pattern, message)
    .transform((s) => s.toUpperCase()),
  description,
  defaultValue: null,
  example,
});

export const fileColumns = (d: DatasetDescriptor): Column[] => d.columns.filter((c) => !c.computed);

export const wireColumns = (d: DatasetDescriptor): Column[] => d.columns.filter((c) => c.type !== 'GEOMETRY');

export const col = (name: string, type: ColumnType, nullable: boolean, description: string, unit?: string): Column =>
  unit === undefined ? { name, type, nullable, description } : { name, type, nullable, description, unit };

/** Group keys that are columns, each named as its column. */
export const columnKeys = (...columns: string[]): AggregateKey[] => columns.map((column) => ({ kind: 'column', name: column, column }));
