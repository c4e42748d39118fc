import type { DatasetDescriptor } from '../../datasets/index.ts';
import { boxWkbHex, plainBoxes, type Box } from './box.ts';

/** A row filter, values already validated; identifiers come from the descriptor. */
export type RowFilter =
  | { kind: 'equals'; column: string; value: string }
  | { kind: 'anyOf'; column: string; values: readonly string[] }
  /**
   * A box on the dataset's geometry. For WKB geometry `shapes` lists the MD5 of every WKB that
   * meets the box exactly (decided in JavaScript, see shape-filter.ts); null keeps the envelope
   * test alone, which is how the candidates are found.
   */
  | { kind: 'box'; box: Box; shapes: readonly string[] | null }
  /**
   * Rows after `key` in the dataset's order (its `orderBy` columns compared in turn): where a keyset
   * page continues. `key` holds one value per order column, as text (a time as an ISO instant).
   */
  | { kind: 'after'; key: readonly string[] };

type Bind = (value: string) => string;

const double = (bind: Bind, v: number) => `CAST(${bind(String(v))} AS DOUBLE)`;

function pointInBox(lat: string, lon: string, box: Box, bind: Bind): string {
  const lats = `${lat} BETWEEN ${double(bind, box.minLat)} AND ${double(bind, box.maxLat)}`;
  const lons =
    box.minLon <= box.maxLon
      ? `${lon} BETWEEN ${double(bind, box.minLon)} AND ${double(bind, box.maxLon)}`
      : `(${lon} >= ${double(bind, box.minLon)} OR ${lon} <= ${double(bind, box.maxLon)})`;
  return `(${lats} AND ${lons})`;
}

function shapeInBox(geometry: string, f: Extract<RowFilter, { kind: 'box' }>, bind: Bind): string {
  const envelopes = plainBoxes(f.box).map((b) => `ST_Intersects_Extent(${geometry}, ST_GeomFromWKB(from_hex(${bind(boxWkbHex(b))})))`);
  const envelope = `(${envelopes.join(' OR ')})`;
  if (f.shapes === null) return envelope;
  // One bound text for the whole list (a year of perimeters is thousands of shapes), tested with a
  // scalar function: an IN over a subquery or a long list becomes a join, which may reorder rows
  // that are read in stored order.
  return `(${envelope} AND list_contains(string_split(${bind(f.shapes.join(','))}, ','), md5(ST_AsWKB(${geometry}))))`;
}

function boxClause(d: DatasetDescriptor, f: Extract<RowFilter, { kind: 'box' }>, col: (name: string) => string, bind: Bind): string {
  const g = d.geometry;
  if (g.kind === 'point') return pointInBox(col(g.latitude), col(g.longitude), f.box, bind);
  if (g.kind === 'wkb') return shapeInBox(col(g.column), f, bind);
  throw new Error(`${d.name} has no geometry a box can filter`);
}

/** `(a, b, ...) > (x, y, ...)` in the dataset's order, spelt out column by column (each comparison can use the files' statistics). */
function afterClause(d: DatasetDescriptor, key: readonly string[], col: (name: string) => string, typed: (column: string, value: string) => string): string {
  if (key.length !== d.orderBy.length) throw new Error(`${d.name}: a key of ${key.length} values for ${d.orderBy.length} order columns`);
  const last = d.orderBy.length - 1;
  let clause = `${col(d.orderBy[last]!)} > ${typed(d.orderBy[last]!, key[last]!)}`;
  for (let i = last - 1; i >= 0; i--) {
    const [c, v] = [col(d.orderBy[i]!), typed(d.orderBy[i]!, key[i]!)];
    clause = `(${c} > ${v} OR (${c} = ${v} AND ${clause}))`;
  }
  return clause;
}

/** SQL conditions of the filters, values bound; a value compared with a non-text column is cast to its type. */
export function filterClauses(d: DatasetDescriptor, filters: readonly RowFilter[], col: (name: string) => string, bind: Bind): string[] {
  const typed = (column: string, value: string) => {
    const type = d.columns.find((c) => c.name === column)?.type ?? 'VARCHAR';
    return type === 'VARCHAR' ? bind(value) : `CAST(${bind(value)} AS ${type})`;
  };
  return filters.map((f) => {
    if (f.kind === 'after') return afterClause(d, f.key, col, typed);
    if (f.kind === 'equals') return `${col(f.column)} = ${typed(f.column, f.value)}`;
    // A list literal, not IN (...): DuckDB rewrites a long IN list into a join, which may reorder rows read in stored order.
    if (f.kind === 'anyOf') return `list_contains([${f.values.map((v) => typed(f.column, v)).join(', ')}], ${col(f.column)})`;
    return boxClause(d, f, col, bind);
  });
}
