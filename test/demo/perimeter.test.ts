import { describe, expect, it } from 'vitest';
import { buildPerimeter } from '../../demo/perimeter.ts';
import { createRng } from '../../demo/random.ts';
import { isValidRing, parseWkt, pointInRing, ringAreaHa } from './wkt.ts';

const CENTRE = { lat: 40.2, lon: -8.0 };

function samplePerimeters(count: number) {
  const rng = createRng(12345);
  return Array.from({ length: count }, () => {
    const radiusKm = rng.between(0.3, 8);
    return { radiusKm, perimeter: buildPerimeter(rng, CENTRE, radiusKm) };
  });
}

describe('burnt-area perimeters', () => {
  const samples = samplePerimeters(400);

  it('are valid: closed simple rings, exterior counter-clockwise, holes clockwise and inside', () => {
    for (const { perimeter } of samples) {
      const { polygons } = parseWkt(perimeter.wkt);
      for (const [exterior, ...holes] of polygons) {
        expect(exterior && isValidRing(exterior), perimeter.wkt.slice(0, 60)).toBe(true);
        if (!exterior) continue;
        expect(ringAreaHa(exterior, CENTRE.lat)).toBeGreaterThan(0);
        for (const hole of holes) {
          expect(isValidRing(hole)).toBe(true);
          expect(ringAreaHa(hole, CENTRE.lat)).toBeLessThan(0);
          expect(hole.every((point) => pointInRing(point, exterior))).toBe(true);
        }
      }
    }
  });

  it('keeps the parts of a MultiPolygon apart', () => {
    for (const { perimeter } of samples) {
      const { polygons } = parseWkt(perimeter.wkt);
      polygons.forEach(([exterior], index) => {
        polygons.forEach(([other], otherIndex) => {
          if (!exterior || !other || index === otherIndex) return;
          expect(exterior.some((point) => pointInRing(point, other))).toBe(false);
        });
      });
    }
  });

  it('mixes Polygons, MultiPolygons and holes', () => {
    const types = samples.map(({ perimeter }) => parseWkt(perimeter.wkt));
    const multi = types.filter((parsed) => parsed.type === 'MULTIPOLYGON').length;
    const withHoles = types.filter((parsed) => parsed.polygons.some((rings) => rings.length > 1)).length;
    expect(multi).toBeGreaterThan(20);
    expect(multi).toBeLessThan(120);
    expect(withHoles).toBeGreaterThan(10);
  });

  it('reports the area its rings enclose, and about the size it was asked for', () => {
    for (const { radiusKm, perimeter } of samples) {
      const { polygons } = parseWkt(perimeter.wkt);
      const measured = polygons.flat().reduce((sum, ring) => sum + ringAreaHa(ring, CENTRE.lat), 0);
      expect(Math.abs(measured - perimeter.areaHa) / perimeter.areaHa).toBeLessThan(0.005);
      const circleHa = Math.PI * radiusKm * radiusKm * 100;
      expect(perimeter.areaHa / circleHa).toBeGreaterThan(0.4);
      expect(perimeter.areaHa / circleHa).toBeLessThan(2.2);
    }
  });
});
