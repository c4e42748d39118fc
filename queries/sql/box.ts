import { Reader } from './wkb.ts';

/** A CRS84 box, edges included. `minLon > maxLon` crosses the antimeridian (as in OGC API Features). */
export interface Box {
  minLon: number;
  minLat: number;
  maxLon: number;
  maxLat: number;
}

/** The box as boxes that do not cross the antimeridian: itself, or its two halves. */
export function plainBoxes(b: Box): Box[] {
  if (b.minLon <= b.maxLon) return [b];
  return [
    { ...b, maxLon: 180 },
    { ...b, minLon: -180 },
  ];
}

type Point = readonly [number, number];
/** A polygon's rings (exterior first, then holes), each a closed list of points. */
type Rings = Point[][];

function readPoint(r: Reader, dims: number): Point {
  const x = r.f64();
  const y = r.f64();
  for (let i = 2; i < dims; i++) r.f64();
  return [x, y];
}

function readRings(r: Reader, dims: number): Rings {
  const rings: Rings = [];
  for (let n = r.u32(); n > 0; n--) {
    const ring: Point[] = [];
    for (let k = r.u32(); k > 0; k--) ring.push(readPoint(r, dims));
    rings.push(ring);
  }
  return rings;
}

/** The polygons of a Polygon or MultiPolygon in WKB (either byte order, 2D/Z/M/ZM); other types have none. */
export function wkbPolygons(wkb: Uint8Array): Rings[] {
  const r = new Reader(new DataView(wkb.buffer, wkb.byteOffset, wkb.byteLength));
  const header = () => {
    r.little = r.u8() === 1;
    const code = r.u32();
    const flavour = Math.floor(code / 1000);
    return { base: code % 1000, dims: 2 + (flavour === 1 || flavour === 2 ? 1 : flavour === 3 ? 2 : 0) };
  };
  const top = header();
  if (top.base === 3) return [readRings(r, top.dims)];
  if (top.base !== 6) throw new Error(`geometry type ${top.base} is not a polygon`);
  const polygons: Rings[] = [];
  for (let n = r.u32(); n > 0; n--) {
    const member = header();
    polygons.push(readRings(r, member.dims));
  }
  return polygons;
}

const cross = (o: Point, a: Point, b: Point) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);

/** Separating axes: the box's own two axes and the segment's normal. Touching counts as meeting. */
function segmentMeetsBox(a: Point, b: Point, box: Box): boolean {
  if (Math.max(a[0], b[0]) < box.minLon || Math.min(a[0], b[0]) > box.maxLon) return false;
  if (Math.max(a[1], b[1]) < box.minLat || Math.min(a[1], b[1]) > box.maxLat) return false;
  const sides = corners(box).map((c) => Math.sign(cross(a, b, c)));
  return !(sides.every((s) => s > 0) || sides.every((s) => s < 0));
}

const corners = (b: Box): Point[] => [
  [b.minLon, b.minLat],
  [b.maxLon, b.minLat],
  [b.maxLon, b.maxLat],
  [b.minLon, b.maxLat],
];

/** Even-odd rule over every ring: inside the exterior and not inside a hole. Only for points on no edge. */
function insideRings(p: Point, rings: Rings): boolean {
  let inside = false;
  for (const ring of rings) {
    for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
      const [xi, yi] = ring[i]!;
      const [xj, yj] = ring[j]!;
      if (yi > p[1] !== yj > p[1] && p[0] < ((xj - xi) * (p[1] - yi)) / (yj - yi) + xi) inside = !inside;
    }
  }
  return inside;
}

/**
 * Whether a polygon (holes respected) and a closed box share a point. When no edge of any ring meets
 * the box, the box lies wholly inside the polygon's interior or wholly outside it (a hole counts as
 * outside), so one corner decides.
 */
export function polygonMeetsBox(rings: Rings, box: Box): boolean {
  for (const ring of rings) {
    // From the last point to the first too: an unclosed ring is closed, a closed one adds a point.
    for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) if (segmentMeetsBox(ring[j]!, ring[i]!, box)) return true;
  }
  return insideRings(corners(box)[0]!, rings);
}

/** Whether a WKB Polygon or MultiPolygon meets the box (edges included, holes respected, antimeridian handled). */
export function shapeMeetsBox(wkb: Uint8Array, box: Box): boolean {
  const polygons = wkbPolygons(wkb);
  return plainBoxes(box).some((b) => polygons.some((p) => polygonMeetsBox(p, b)));
}

/** The box as a WKB Polygon, hex: what DuckDB's ST_Intersects_Extent compares envelopes with. */
export function boxWkbHex(b: Box): string {
  const ring = corners(b);
  ring.push(ring[0]!);
  const out = Buffer.alloc(1 + 4 + 4 + 4 + ring.length * 16);
  out.writeUInt8(1, 0);
  out.writeUInt32LE(3, 1);
  out.writeUInt32LE(1, 5);
  out.writeUInt32LE(ring.length, 9);
  ring.forEach(([x, y], i) => {
    out.writeDoubleLE(x, 13 + i * 16);
    out.writeDoubleLE(y, 21 + i * 16);
  });
  return out.toString('hex');
}
