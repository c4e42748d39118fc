import type { AggregateShape } from '../aggregate-shape.ts';
import { GEOMETRY_COLUMN } from '../../sql/compile-columnar.ts';
import type { Groups } from '../aggregate-groups.ts';
import type { AggregateColumn, AggregateGeometry } from '../aggregate-rows.ts';

/**
 * Whether an aggregate's groups have geometry (a grid cell, a station's point): its Parquet and
 * Arrow answers then end with a `geometry` column, as the data endpoints' do. Without such a key
 * every group's geometry is null and the answers have no geometry column at all.
 */
export const hasGroupGeometry = (shape: AggregateShape): boolean => shape.keys.some((k) => k.kind === 'grid' || k.kind === 'station');

/** WKB type codes (ISO, 2D). */
const WKB_POINT = 1;
const WKB_POLYGON = 3;

/** The bytes of a geometry's WKB. */
const wkbLength = (g: NonNullable<AggregateGeometry>): number =>
  g.type === 'Point' ? 21 : 9 + g.coordinates.reduce((n, ring) => n + 4 + 16 * ring.length, 0);

/** Writes one position at `at`; returns where the next byte goes. */
function writePosition(view: DataView, at: number, p: readonly number[]): number {
  view.setFloat64(at, p[0]!, true);
  view.setFloat64(at + 8, p[1]!, true);
  return at + 16;
}

/** Writes a geometry's WKB at `at`. */
function writeWkb(view: DataView, at: number, g: NonNullable<AggregateGeometry>): void {
  view.setUint8(at, 1);
  view.setUint32(at + 1, g.type === 'Point' ? WKB_POINT : WKB_POLYGON, true);
  if (g.type === 'Point') return void writePosition(view, at + 5, g.coordinates);
  view.setUint32(at + 5, g.coordinates.length, true);
  let next = at + 9;
  for (const ring of g.coordinates) {
    view.setUint32(next, ring.length, true);
    next += 4;
    for (let i = 0; i < ring.length; i++) next = writePosition(view, next, ring[i]!);
  }
}

/**
 * The geometries as little-endian ISO WKB (the byte order DuckDB's ST_AsWKB gives the data
 * endpoints' Arrow geometry), one after the other in one buffer: row `i` is bytes
 * `[offsets[i], offsets[i + 1])`, none for a null. Coordinates are the GeoJSON answer's doubles.
 */
export function wkbColumn(geometries: readonly AggregateGeometry[]): { offsets: Int32Array; data: Buffer } {
  const offsets = new Int32Array(geometries.length + 1);
  for (let i = 0; i < geometries.length; i++) offsets[i + 1] = offsets[i]! + (geometries[i] ? wkbLength(geometries[i]!) : 0);
  const data = Buffer.alloc(offsets[geometries.length]!);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let i = 0; i < geometries.length; i++) if (geometries[i]) writeWkb(view, offsets[i]!, geometries[i]!);
  return { offsets, data };
}

/** The column the groups' WKB travels in, as hex text, through the CSV DuckDB writes Parquet from. */
export const WKB_HEX_COLUMN: AggregateColumn = { name: GEOMETRY_COLUMN, type: 'text' };

/** The groups with their geometry's WKB as hex text after the other values (null for a group without geometry). */
export function withWkbHex(groups: Groups): Groups {
  return {
    ...groups,
    *batches() {
      for (const batch of groups.batches()) {
        const { offsets, data } = wkbColumn(batch.map((r) => r.geometry));
        const hex = data.toString('hex');
        yield batch.map((r, i) => ({ values: [...r.values, r.geometry === null ? null : hex.slice(2 * offsets[i]!, 2 * offsets[i + 1]!)], geometry: r.geometry }));
      }
    },
  };
}
