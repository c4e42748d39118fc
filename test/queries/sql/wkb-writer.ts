/** A geometry tree for writing ISO WKB by hand in tests (DuckDB 1.5 core has no ST_GeomFromText). */
export type Geom =
  | { type: 'Point'; at: number[] }
  | { type: 'LineString'; at: number[][] }
  | { type: 'Polygon'; at: number[][][] }
  | { type: 'MultiPoint' | 'MultiLineString' | 'MultiPolygon' | 'GeometryCollection'; members: Geom[] };

/** A closed axis-aligned rectangle ring, counter-clockwise from (x0, y0). */
export const square = (x0: number, y0: number, x1: number, y1: number): number[][] => [
  [x0, y0],
  [x1, y0],
  [x1, y1],
  [x0, y1],
  [x0, y0],
];

const CODES = { Point: 1, LineString: 2, Polygon: 3, MultiPoint: 4, MultiLineString: 5, MultiPolygon: 6, GeometryCollection: 7 };

export interface WkbOptions {
  bigEndian?: boolean;
  /** 0 XY, 1000 XYZ, 2000 XYM, 3000 XYZM (ISO type code offset). */
  flavour?: 0 | 1000 | 2000 | 3000;
}

/** Writes `g` as ISO WKB; every member carries its own header with the same byte order and flavour. */
export function writeWkb(g: Geom, o: WkbOptions = {}): Uint8Array {
  const out: number[] = [];
  const little = !o.bigEndian;
  const u32 = (v: number) => {
    const b = Buffer.alloc(4);
    if (little) b.writeUInt32LE(v);
    else b.writeUInt32BE(v);
    out.push(...b);
  };
  const f64 = (v: number) => {
    const b = Buffer.alloc(8);
    if (little) b.writeDoubleLE(v);
    else b.writeDoubleBE(v);
    out.push(...b);
  };
  const ring = (points: number[][]) => {
    u32(points.length);
    for (const p of points) p.forEach(f64);
  };
  const write = (x: Geom) => {
    out.push(little ? 1 : 0);
    u32(CODES[x.type] + (o.flavour ?? 0));
    if (x.type === 'Point') x.at.forEach(f64);
    else if (x.type === 'LineString') ring(x.at);
    else if (x.type === 'Polygon') {
      u32(x.at.length);
      x.at.forEach(ring);
    } else {
      u32(x.members.length);
      x.members.forEach(write);
    }
  };
  write(g);
  return Uint8Array.from(out);
}
