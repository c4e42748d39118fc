import type { AggregateShape } from '../sql/aggregate-shape.ts';
import { GEOMETRY_COLUMN } from '../sql/compile-columnar.ts';
import type { Groups } from './aggregate-groups.ts';
import type { AggregateColumn, AggregateGeometry, AggregateRow } from './aggregate-rows.ts';

/**
 * Whether an aggregate's groups have geometry (a grid cell, a station's point): its Parquet and
 * Arrow answers then end with a `geometry` column, as the data endpoints' do. Without such a key
 * every group's geometry is null and the answers have no geometry column at all.
 */
export const hasGroupGeometry = (shape: AggregateShape): boolean => shape.keys.some((k) => k.kind === 'grid' || k.kind === 'station');

/** WKB type codes (ISO, 2D). */
const WKB_POINT = 1;
const WKB_POLYGON = 3;

/**
 * A group's geometry as little-endian ISO WKB (the byte order DuckDB's ST_AsWKB gives the data
 * endpoints' Arrow geometry); null stays null. Coordinates are the GeoJSON answer's doubles.
 */
export function geometryWkb(g: AggregateGeometry): Buffer | null {
  if (g === null) return null;
  const positions = g.type === 'Point' ? [g.coordinates] : g.coordinates.flat();
  const head = g.type === 'Point' ? 5 : 9 + 4 * g.coordinates.length;
  const out = Buffer.alloc(head + 16 * positions.length);
  out.writeUInt8(1, 0);
  out.writeUInt32LE(g.type === 'Point' ? WKB_POINT : WKB_POLYGON, 1);
  let at = 5;
  if (g.type === 'Polygon') {
    out.writeUInt32LE(g.coordinates.length, at);
    at += 4;
  }
  const rings = g.type === 'Point' ? [[g.coordinates]] : g.coordinates;
  for (const ring of rings) {
    if (g.type === 'Polygon') at = out.writeUInt32LE(ring.length, at);
    for (const [x, y] of ring) at = out.writeDoubleLE(y, out.writeDoubleLE(x, at));
  }
  return out;
}

/** The column the groups' WKB travels in, as hex text, through the CSV DuckDB writes Parquet from. */
export const WKB_HEX_COLUMN: AggregateColumn = { name: GEOMETRY_COLUMN, type: 'text' };

/** The groups with their geometry's WKB as hex text after the other values (null for a group without geometry). */
export function withWkbHex(groups: Groups): Groups {
  const hex = (r: AggregateRow): AggregateRow => ({ values: [...r.values, geometryWkb(r.geometry)?.toString('hex') ?? null], geometry: r.geometry });
  return {
    ...groups,
    *batches() {
      for (const batch of groups.batches()) yield batch.map(hex);
    },
  };
}
