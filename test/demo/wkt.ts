// Just enough WKT for the tests to check perimeters independently of how they were built.

export type Point = [number, number];
export type Ring = Point[];
export type Polygon = Ring[];

export function parseWkt(wkt: string): { type: 'POLYGON' | 'MULTIPOLYGON'; polygons: Polygon[] } {
  const match = /^(MULTIPOLYGON|POLYGON)\s*(\(.*\))$/.exec(wkt.trim());
  if (!match?.[1] || !match[2]) throw new Error(`not a (multi)polygon: ${wkt.slice(0, 40)}`);
  const type = match[1] as 'POLYGON' | 'MULTIPOLYGON';
  const nested = JSON.parse(
    match[2].replace(/\(/g, '[').replace(/\)/g, ']').replace(/(-?[\d.]+(?:e-?\d+)?)\s+(-?[\d.]+(?:e-?\d+)?)/g, '[$1,$2]'),
  ) as unknown;
  const polygons = (type === 'POLYGON' ? [nested] : nested) as Polygon[];
  return { type, polygons };
}

/** Shoelace on an equirectangular projection about the ring's first point, in hectares (signed). */
export function ringAreaHa(ring: Ring, originLat: number): number {
  const kmPerLon = 111.32 * Math.cos((originLat * Math.PI) / 180);
  const kmPerLat = 110.57;
  let twice = 0;
  for (let index = 0; index + 1 < ring.length; index += 1) {
    const [x1, y1] = ring[index] ?? [0, 0];
    const [x2, y2] = ring[index + 1] ?? [0, 0];
    twice += x1 * kmPerLon * (y2 * kmPerLat) - x2 * kmPerLon * (y1 * kmPerLat);
  }
  return (twice / 2) * 100;
}

function segmentsCross([a, b]: [Point, Point], [c, d]: [Point, Point]): boolean {
  const orient = (p: Point, q: Point, r: Point): number => Math.sign((q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]));
  return orient(a, b, c) * orient(a, b, d) < 0 && orient(c, d, a) * orient(c, d, b) < 0;
}

/** True when no two non-adjacent edges of the closed ring cross. */
export function isSimpleRing(ring: Ring): boolean {
  const edges = ring.slice(0, -1).map((point, index): [Point, Point] => [point, ring[index + 1] ?? point]);
  for (let i = 0; i < edges.length; i += 1) {
    for (let j = i + 2; j < edges.length; j += 1) {
      if (i === 0 && j === edges.length - 1) continue;
      const first = edges[i];
      const second = edges[j];
      if (first && second && segmentsCross(first, second)) return false;
    }
  }
  return true;
}

export function pointInRing([x, y]: Point, ring: Ring): boolean {
  let inside = false;
  for (let index = 0, previous = ring.length - 1; index < ring.length; previous = index, index += 1) {
    const [xi, yi] = ring[index] ?? [0, 0];
    const [xj, yj] = ring[previous] ?? [0, 0];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Closed, at least a triangle, simple. */
export function isValidRing(ring: Ring): boolean {
  const first = ring[0];
  const last = ring[ring.length - 1];
  return ring.length >= 4 && !!first && !!last && first[0] === last[0] && first[1] === last[1] && isSimpleRing(ring);
}
