// Burnt-area perimeters as WKT in lon/lat (CRS84). Rings are star-shaped around their own
// centre (strictly increasing angles, positive radii), which makes them simple polygons by
// construction; holes (unburnt islands) sit well inside the smallest radius and spot fires
// (extra MultiPolygon parts) sit beyond the largest one, so the result is always valid.

import type { Rng } from './random.ts';

export interface Perimeter {
  wkt: string;
  areaHa: number;
  parts: number;
}

type Ring = [number, number][];

const KM_PER_DEG_LAT = 110.57;
const KM_PER_DEG_LON_AT_EQUATOR = 111.32;

export function buildPerimeter(rng: Rng, centre: { lat: number; lon: number }, radiusKm: number): Perimeter {
  const windDir = rng.next() * 2 * Math.PI;
  const main = starRing(rng, [0, 0], radiusKm, 16 + rng.int(24), windDir);
  const polygons: Ring[][] = [[main.ring]];
  if (radiusKm >= 0.8 && rng.chance(0.2)) {
    // An unburnt island: extent <= 0.35 of the smallest radius, inside every chord of the ring.
    const offset = 0.15 * main.minRadius;
    const angle = rng.next() * 2 * Math.PI;
    const hole = starRing(rng, [offset * Math.cos(angle), offset * Math.sin(angle)], 0.14 * main.minRadius, 8, windDir);
    polygons[0]?.push(hole.ring.reverse());
  }
  if (rng.chance(0.15)) {
    const count = 1 + rng.int(2);
    let bearing = rng.next() * 2 * Math.PI;
    for (let index = 0; index < count; index += 1) {
      const spotRadius = radiusKm * rng.between(0.12, 0.25);
      const distance = main.maxRadius + 1.35 * spotRadius + radiusKm * rng.between(0.15, 0.6);
      const spot = starRing(rng, [distance * Math.cos(bearing), distance * Math.sin(bearing)], spotRadius, 10 + rng.int(8), windDir);
      polygons.push([spot.ring]);
      bearing += Math.PI / 2 + rng.next() * Math.PI;
    }
  }
  const areaKm2 = polygons.reduce((sum, rings) => sum + rings.reduce((inner, ring) => inner + signedAreaKm2(ring), 0), 0);
  return { wkt: toWkt(polygons, centre), areaHa: areaKm2 * 100, parts: polygons.length };
}

/** Counter-clockwise ring; radii within [0.45, 1.35] x radius, longer down-wind. */
function starRing(rng: Rng, [cx, cy]: [number, number], radiusKm: number, vertices: number, windDir: number) {
  const lobes = 2 + rng.int(4);
  const phase = rng.next() * 2 * Math.PI;
  const ring: Ring = [];
  let minRadius = Infinity;
  let maxRadius = 0;
  for (let index = 0; index < vertices; index += 1) {
    const angle = (2 * Math.PI * (index + 0.1 + 0.8 * rng.next())) / vertices;
    const shape = 1 + 0.2 * Math.sin(lobes * angle + phase) + 0.25 * Math.cos(angle - windDir) + 0.12 * (rng.next() - 0.5);
    const radius = radiusKm * Math.min(1.35, Math.max(0.45, shape));
    minRadius = Math.min(minRadius, radius);
    maxRadius = Math.max(maxRadius, radius);
    ring.push([cx + radius * Math.cos(angle), cy + radius * Math.sin(angle)]);
  }
  return { ring, minRadius, maxRadius };
}

/** Shoelace on local km coordinates: positive for counter-clockwise rings, negative for holes. */
function signedAreaKm2(ring: Ring): number {
  let twice = 0;
  ring.forEach(([x1, y1], index) => {
    const [x2, y2] = ring[(index + 1) % ring.length] ?? [x1, y1];
    twice += x1 * y2 - x2 * y1;
  });
  return twice / 2;
}

function toWkt(polygons: Ring[][], centre: { lat: number; lon: number }): string {
  const lonPerKm = 1 / (KM_PER_DEG_LON_AT_EQUATOR * Math.cos((centre.lat * Math.PI) / 180));
  const point = ([x, y]: [number, number]): string =>
    `${formatCoordinate(centre.lon + x * lonPerKm)} ${formatCoordinate(centre.lat + y / KM_PER_DEG_LAT)}`;
  const ring = (points: Ring): string => {
    const text = points.map(point);
    return `(${[...text, text[0]].join(', ')})`;
  };
  const polygon = (rings: Ring[]): string => `(${rings.map(ring).join(', ')})`;
  const [only] = polygons;
  if (polygons.length === 1 && only) return `POLYGON ${polygon(only)}`;
  return `MULTIPOLYGON (${polygons.map(polygon).join(', ')})`;
}

/** 6 decimals is ~0.1 m: finer than any perimeter is mapped, coarse enough to read. */
function formatCoordinate(value: number): string {
  return String(Number(value.toFixed(6)));
}
