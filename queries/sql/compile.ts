import { wireColumns, type Column, type DatasetDescriptor } from '../../datasets/index.ts';
import { ARROW_TYPES, columnarFields, PARQUET_TYPES, type ColumnarTypes } from './compile-columnar.ts';
import type { CorrectionModel } from '../../datasets/correction-model.ts';
import { correctedValue } from './correction-sql.ts';
import { filterClauses, type RowFilter } from './filter-sql.ts';
import { formatInstant, type Instant } from '../instant.ts';
import { csvField, filePathValue, ident, jsonText, numberText, readParquet, readParquetBound, SOURCE_FILE_COLUMN, sqlString } from './sql.ts';


/** Everything a query needs, decided by the preflight; compile functions are pure over it. */
export interface QuerySpec {
  descriptor: DatasetDescriptor;
  dataDir: string;
  /** Filters on file columns and geometry, values already validated. */
  filters: readonly RowFilter[];
  /** Values of wire-only columns taken from request parameters (e.g. series). */
  params: Readonly<Record<string, string>>;
  /** The correction model whose values (and id) the rows carry: the corrected series with a model published. */
  correction?: CorrectionModel | null;
  /** Files of the sensor-stations dataset, when readings need their station's point. */
  stationFiles: readonly string[] | null;
}

export interface Compiled {
  sql: string;
  params: string[];
  /** The files read, bound as a VARCHAR[] value after `params` (RowsQuery.bindFiles), instead of written into `sql`. */
  files?: string[];
}

const T = 't';
const col = (name: string) => `${T}.${ident(name)}`;

/** Binds a value as the next parameter of `params`, giving its placeholder. */
const binder = (params: string[]) => (value: string) => `$${params.push(value)}`;

/** The WHERE clause over `t`: the window [from, to) and the filters, values bound into `params`. */
export function compileWhere(spec: QuerySpec, from: Instant | null, to: Instant | null, params: string[]): string {
  const bind = binder(params);
  const clauses: string[] = [];
  const time = spec.descriptor.time;
  if (time && from !== null) clauses.push(`${col(time.column)} >= ${bind(formatInstant(from))}::TIMESTAMPTZ`);
  if (time && to !== null) clauses.push(`${col(time.column)} < ${bind(formatInstant(to))}::TIMESTAMPTZ`);
  clauses.push(...filterClauses(spec.descriptor, spec.filters, col, bind));
  return clauses.length ? ` WHERE ${clauses.join(' AND ')}` : '';
}

const orderBy = (d: DatasetDescriptor) => ` ORDER BY ${d.orderBy.map(col).join(', ')}`;

/** Exact count of rows in [from, to) that match the filters, per file (files without rows are absent). */
export function compileCountByFile(spec: QuerySpec, files: readonly string[], from: Instant | null, to: Instant | null): Compiled {
  const params: string[] = [];
  const where = compileWhere(spec, from, to, params);
  const source = readParquet(files, spec.dataDir, true);
  return { sql: `SELECT ${T}.${ident(SOURCE_FILE_COLUMN)} AS file, count(*)::BIGINT AS n FROM ${source} AS ${T}${where} GROUP BY 1`, params };
}

/** Exact count of rows in [from, to) that match the filters. */
export function compileCount(spec: QuerySpec, files: readonly string[], from: Instant | null, to: Instant | null): Compiled {
  const params: string[] = [];
  const where = compileWhere(spec, from, to, params);
  return { sql: `SELECT count(*)::BIGINT AS n FROM ${readParquet(files, spec.dataDir)} AS ${T}${where}`, params };
}

/**
 * The distinct shapes (MD5 of the WKB, WKB) of rows in [from, to) that pass the filters, a box
 * among them by envelope only: the candidates whose exact test is left to JavaScript.
 */
export function compileShapeCandidates(spec: QuerySpec, files: readonly string[], from: Instant | null, to: Instant | null): Compiled {
  const g = spec.descriptor.geometry;
  if (g.kind !== 'wkb') throw new Error(`${spec.descriptor.name} has no WKB geometry`);
  const params: string[] = [];
  const where = compileWhere(spec, from, to, params);
  const wkb = `ST_AsWKB(${col(g.column)})`;
  return { sql: `SELECT DISTINCT md5(${wkb}) AS k, ${wkb} AS wkb FROM ${readParquet(files, spec.dataDir)} AS ${T}${where} ORDER BY 1`, params };
}

export interface TimeAtQuery {
  spec: QuerySpec;
  files: readonly string[];
  from: Instant;
  to: Instant;
  /** 0-based position of the row in the total order of the rows in [from, to) that pass the filters. */
  offset: number;
}

/** Time (epoch µs) of the row at position `offset`: where a cut falls. */
export function compileTimeAt(q: TimeAtQuery): Compiled {
  const time = q.spec.descriptor.time;
  if (!time) throw new Error(`${q.spec.descriptor.name} has no time axis`);
  const params: string[] = [];
  const where = compileWhere(q.spec, q.from, q.to, params);
  const sql = `SELECT epoch_us(${col(time.column)})::BIGINT AS t FROM ${readParquet(q.files, q.spec.dataDir)} AS ${T}${where}${orderBy(q.spec.descriptor)} LIMIT 1 OFFSET ${Math.trunc(q.offset)}`;
  return { sql, params };
}

/**
 * The order key of the row at position `offset` (each order column as text, a time as epoch µs):
 * where a keyset page that ends inside one instant, or in a dataset without time, continues.
 */
export function compileKeyAt(q: Omit<TimeAtQuery, 'from' | 'to'> & { from: Instant | null; to: Instant | null }): Compiled {
  const d = q.spec.descriptor;
  const params: string[] = [];
  const where = compileWhere(q.spec, q.from, q.to, params);
  const keys = d.orderBy.map((name) => (d.time?.column === name ? `CAST(epoch_us(${col(name)}) AS VARCHAR)` : `CAST(${col(name)} AS VARCHAR)`));
  const sql = `SELECT ${keys.join(', ')} FROM ${readParquet(q.files, q.spec.dataDir)} AS ${T}${where}${orderBy(d)} LIMIT 1 OFFSET ${Math.trunc(q.offset)}`;
  return { sql, params };
}

/** A wire column's value in a select over the files (alias `t`): read, corrected, or given by the request, binding into `params`. */
export function columnValue(c: Column, spec: QuerySpec, params: string[]): string {
  const bind = binder(params);
  const model = spec.correction ?? null;
  if (!c.computed) return correctedValue(spec.descriptor, model, c.name, col, bind);
  if (c.computed.kind === 'correctionModel') return model ? `CAST(${bind(model.id)} AS VARCHAR)` : 'CAST(NULL AS VARCHAR)';
  return `CAST(${bind(spec.params[c.computed.param] ?? '')} AS VARCHAR)`;
}

/** One text (or native) column per CSV field; DuckDB's CSV writer quotes and writes nulls as empty fields. */
function csvFields(spec: QuerySpec, params: string[]): string {
  return wireColumns(spec.descriptor)
    .map((c, i) => `${csvField(c, columnValue(c, spec, params))} AS c${i}`)
    .join(', ');
}

/** A Point, or null when a coordinate is missing or not finite (JSON has no NaN). */
const pointJson = (lat: string, lon: string) =>
  `CASE WHEN isfinite(${lat}) AND isfinite(${lon}) THEN concat('{"type":"Point","coordinates":[', ${numberText(lon)}, ',', ${numberText(lat)}, ']}') ELSE 'null' END`;

export const hasStations = (spec: QuerySpec): boolean => spec.stationFiles !== null && spec.stationFiles.length > 0;

/** The station's point in a select with the station join (`stationJoin`). */
export const STATION_POINT = { latitude: 's.lat', longitude: 's.lon' } as const;

/** The `properties` object's text: its members' keys as constants between the values' JSON text, in wire column order. */
function propertiesJson(spec: QuerySpec, params: string[]): string[] {
  const parts = wireColumns(spec.descriptor).map((c, i) => `${sqlString(`${i === 0 ? '' : ','}${JSON.stringify(c.name)}:`)}, ${jsonText(c, columnValue(c, spec, params))}`);
  return [`'{'`, ...parts, `'}'`];
}

/**
 * A Feature as text columns, written by concatenating each value's JSON text (one string built per
 * row, no JSON document). WKB geometry is decoded in JavaScript (no spatial extension here), so
 * that dataset yields (head, wkb, tail); every other yields the whole Feature in one column.
 */
function featureColumns(spec: QuerySpec, params: string[]): string {
  const d = spec.descriptor;
  const id = d.featureId ? [`'"id":'`, `coalesce(CAST(to_json(${col(d.featureId)}) AS VARCHAR), 'null')`, `','`] : [];
  const head = [`'{"type":"Feature",'`, ...id, `'"geometry":'`];
  const tail = [`',"properties":'`, ...propertiesJson(spec, params), `'}'`];
  const concat = (parts: string[]) => `concat(${parts.join(', ')})`;
  const g = d.geometry;
  if (g.kind === 'wkb') return `${concat(head)} AS head, ST_AsWKB(${col(g.column)}) AS wkb, ${concat(tail)} AS tail`;
  const geometry =
    g.kind === 'point' ? pointJson(col(g.latitude), col(g.longitude)) : g.kind === 'station' && hasStations(spec) ? pointJson(STATION_POINT.latitude, STATION_POINT.longitude) : `'null'`;
  return `${concat([...head, geometry, ...tail])} AS feature`;
}

/** Each station's point (sid, lat, lon); min() keeps one point per station even if the registry holds a duplicate, so rows are never multiplied. */
export const stationPoints = (spec: QuerySpec & { stationFiles: readonly string[] }): string =>
  `SELECT "stationId" AS sid, min(latitude) AS lat, min(longitude) AS lon FROM ${readParquet(spec.stationFiles, spec.dataDir)} GROUP BY 1`;

function stationJoin(spec: QuerySpec): string {
  const g = spec.descriptor.geometry;
  if (g.kind !== 'station' || !spec.stationFiles || !hasStations(spec)) return '';
  return ` LEFT JOIN (${stationPoints({ ...spec, stationFiles: spec.stationFiles })}) AS s ON s.sid = ${col(g.stationId)}`;
}

/** A format's rows as SQL: its select list and the join it needs, binding their values into `params` in order. */
export type RowSelect = (spec: QuerySpec, params: string[]) => { fields: string; join: string };

/** One text (or native) column per CSV field. */
export const csvRows: RowSelect = (spec, params) => ({ fields: csvFields(spec, params), join: '' });

/** A GeoJSON Feature as text columns; readings are joined to their station's point. */
export const featureRows: RowSelect = (spec, params) => ({ fields: featureColumns(spec, params), join: stationJoin(spec) });

const columnarRows =
  (types: ColumnarTypes): RowSelect =>
  (spec, params) => ({ fields: columnarFields(spec.descriptor, col, (c) => columnValue(c, spec, params), types), join: '' });

/** The columns of a Parquet response, typed for DuckDB's Parquet writer. */
export const parquetRows = columnarRows(PARQUET_TYPES);

/** The columns of an Arrow response, typed for the batches built in JavaScript. */
export const arrowRows = columnarRows(ARROW_TYPES);

export interface RowsQuery {
  spec: QuerySpec;
  files: readonly string[];
  /** The response format's rows (its `rows` rule in queries/formats.ts). */
  select: RowSelect;
  from: Instant | null;
  to: Instant | null;
  /** At most this many rows (a cut inside one instant); null or absent: all. */
  limit?: number | null;
  /**
   * `stored` skips the sort: only for files checked to hold their rows in ascending order key, one
   * per partition, listed in partition order (a scan, filter and LIMIT keep DuckDB's insertion
   * order; a join may not, so a select with a join is always sorted).
   */
  order?: 'sort' | 'stored';
  /** The files as a value bound after the others (Compiled.files): one statement text for any files, prepared once. */
  bindFiles?: boolean;
}

/** The ordered rows of one partition group, already encoded by DuckDB as the format wants them. */
export function compileRows(q: RowsQuery): Compiled {
  const params: string[] = [];
  const { fields, join } = q.select(q.spec, params);
  const where = compileWhere(q.spec, q.from, q.to, params);
  const sort = q.order === 'stored' && join === '' ? '' : orderBy(q.spec.descriptor);
  const tailLimit = q.limit == null ? '' : ` LIMIT ${Math.trunc(q.limit)}`;
  const source = q.bindFiles ? readParquetBound(params.length + 1) : readParquet(q.files, q.spec.dataDir);
  const sql = `SELECT ${fields} FROM ${source} AS ${T}${join}${where}${sort}${tailLimit}`;
  return q.bindFiles ? { sql, params, files: q.files.map((f) => filePathValue(f, q.spec.dataDir)) } : { sql, params };
}

export const csvHeader = (d: DatasetDescriptor): string => wireColumns(d).map((c) => c.name).join(',') + '\n';
