import { createHash } from 'node:crypto';
import { fileColumns, type Column, type DatasetDescriptor } from '../../datasets/index.ts';
import { columnValue, compileRows, featureRows, hasStations, STATION_POINT, type Compiled, type QuerySpec, type RowSelect, type RowsQuery } from './compile.ts';
import { ident } from './sql.ts';

/**
 * A window's Features in two statements, for DuckDB's plan cache. DuckDB plans again, on every
 * execution, a statement that reads Parquet or binds a value over a table scan; the Feature select
 * has several hundred expressions and planning it costs more than running it over an hour's rows.
 * So the window's rows (read, filtered, joined and ordered as the one-statement select does) are
 * inserted into a table inside a transaction that is rolled back (the rows stay the transaction's
 * own: never seen by another connection, gone at the rollback), and the Features are selected from
 * that table by a statement with no value bound, whose plan DuckDB keeps.
 */
export interface StagedWindow {
  /** The table's name and its CREATE statement (one table per dataset shape, created once, always empty). */
  table: { name: string; create: string };
  /** `INSERT INTO` the table: the window's rows in the order the Features are sent; the files bound (RowsQuery.bindFiles). */
  fill: Compiled;
  /** The Features, selected from the table in its insertion order; binds nothing. */
  rows: string;
}

const STATION_COLUMNS = { latitude: '__station_latitude', longitude: '__station_longitude' } as const;

/**
 * The dataset as the table holds it: wire columns given by the request (a parameter, the correction
 * model's id) become stored text columns, and a station's joined point becomes two stored columns.
 */
function stagedDescriptor(spec: QuerySpec): DatasetDescriptor {
  const d = spec.descriptor;
  const columns = d.columns.map((c): Column => (c.computed ? { name: c.name, type: c.type, nullable: c.nullable, description: c.description } : c));
  const joined = d.geometry.kind === 'station' && hasStations(spec);
  return { ...d, columns, geometry: joined ? { kind: 'point', ...STATION_COLUMNS } : d.geometry };
}

/** The table's columns, name and type, in insertion order. */
function tableColumns(spec: QuerySpec, staged: DatasetDescriptor): { name: string; type: string }[] {
  const columns = fileColumns(staged).map((c) => ({ name: c.name, type: c.type as string }));
  if (staged.geometry !== spec.descriptor.geometry && staged.geometry.kind === 'point') {
    columns.push({ name: STATION_COLUMNS.latitude, type: 'DOUBLE' }, { name: STATION_COLUMNS.longitude, type: 'DOUBLE' });
  }
  return columns;
}

/**
 * The fill's select list: each stored column as the one-statement select has it (read from the
 * file, corrected by the model, bound from the request), then the station's point. Corrected
 * values are stored, so the Feature select stays free of bound values for any model.
 */
const fillRows =
  (staged: DatasetDescriptor): RowSelect =>
  (spec, params) => {
    const fields = fileColumns(staged).map((c) => columnValue(spec.descriptor.columns.find((o) => o.name === c.name) ?? c, spec, params));
    if (staged.geometry !== spec.descriptor.geometry) fields.push(STATION_POINT.latitude, STATION_POINT.longitude);
    return { fields: fields.join(', '), join: featureRows(spec, []).join };
  };

/**
 * The window's GeoJSON Features staged through a table, or null where they are not one text column
 * (WKB geometry is decoded in JavaScript) or a row limit applies.
 */
export function compileStaged(q: RowsQuery): StagedWindow | null {
  if (q.limit != null || q.spec.descriptor.geometry.kind === 'wkb') return null;
  const staged = stagedDescriptor(q.spec);
  const columns = tableColumns(q.spec, staged);
  if (columns.some((c) => c.type === 'GEOMETRY')) return null;
  const definition = columns.map((c) => `${ident(c.name)} ${c.type}`).join(', ');
  const name = `__window_${createHash('sha256').update(`${q.spec.descriptor.name}\0${definition}`).digest('hex').slice(0, 16)}`;
  const fill = compileRows({ ...q, select: fillRows(staged), bindFiles: true });
  const params: string[] = [];
  // The table holds the values already corrected: the Feature select reads them as they are.
  const { fields, join } = featureRows({ ...q.spec, descriptor: staged, stationFiles: null, correction: null }, params);
  if (params.length > 0 || join !== '') throw new Error('a staged Feature select binds no value and joins nothing');
  return {
    table: { name, create: `CREATE TABLE IF NOT EXISTS ${ident(name)} (${definition})` },
    fill: { ...fill, sql: `INSERT INTO ${ident(name)} ${fill.sql}` },
    rows: `SELECT ${fields} FROM ${ident(name)} AS t`,
  };
}
