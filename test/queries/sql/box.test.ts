import { describe, expect, it } from 'vitest';
import { plainBoxes, shapeMeetsBox, type Box } from '../../../queries/sql/box.ts';
import { square, writeWkb, type Geom } from './wkb-writer.ts';

const polygon = (...rings: number[][][]): Geom => ({ type: 'Polygon', at: rings });
const box = (minLon: number, minLat: number, maxLon: number, maxLat: number): Box => ({ minLon, minLat, maxLon, maxLat });
const meets = (g: Geom, b: Box, o: Parameters<typeof writeWkb>[1] = {}) => shapeMeetsBox(writeWkb(g, o), b);

/** An L: the square [0,10]² without its upper-right quarter [5,10]². Its envelope covers that quarter. */
const L = polygon([
  [0, 0],
  [10, 0],
  [10, 5],
  [5, 5],
  [5, 10],
  [0, 10],
  [0, 0],
]);

describe('polygon and box intersection (edges included, holes respected)', () => {
  it('a box inside the missing corner of an L meets its envelope but not the polygon', () => {
    expect(meets(L, box(6, 6, 9, 9))).toBe(false);
  });

  it('a box touching an edge or a vertex of the polygon from outside meets it', () => {
    expect(meets(L, box(5, 6, 9, 9))).toBe(true); // shares the edge x=5
    expect(meets(L, box(10, 5, 12, 7))).toBe(true); // touches the vertex (10,5)
    expect(meets(L, box(10.000001, 5, 12, 7))).toBe(false);
  });

  it('a box wholly inside the polygon, and a polygon wholly inside the box, meet', () => {
    expect(meets(L, box(1, 1, 2, 2))).toBe(true);
    expect(meets(L, box(-1, -1, 11, 11))).toBe(true);
  });

  it('an edge crossing the box with no vertex inside it meets', () => {
    expect(meets(polygon(square(0, 0, 10, 10)), box(-5, 4, 15, 6))).toBe(true);
    const triangle = polygon([
      [0, 0],
      [10, 10],
      [0, 10],
      [0, 0],
    ]);
    expect(meets(triangle, box(4, 5, 6, 5.5))).toBe(true);
    expect(meets(triangle, box(6, 0, 10, 5))).toBe(false);
  });

  it('a box inside a hole does not meet the polygon; touching the hole edge does', () => {
    const holed = polygon(square(0, 0, 10, 10), square(2, 2, 8, 8));
    expect(meets(holed, box(3, 3, 7, 7))).toBe(false);
    expect(meets(holed, box(3, 3, 8, 7))).toBe(true);
    expect(meets(holed, box(1, 1, 3, 3))).toBe(true);
  });

  it('a MultiPolygon meets when any member does, in either byte order and with Z', () => {
    const multi: Geom = { type: 'MultiPolygon', members: [polygon(square(0, 0, 1, 1)), polygon(square(20, 20, 21, 21))] };
    expect(meets(multi, box(20.5, 20.5, 30, 30))).toBe(true);
    expect(meets(multi, box(5, 5, 6, 6))).toBe(false);
    expect(meets(multi, box(20.5, 20.5, 30, 30), { bigEndian: true })).toBe(true);
    const z: Geom = { type: 'MultiPolygon', members: [polygon(square(0, 0, 1, 1).map((p) => [...p, 100]))] };
    expect(meets(z, box(0.5, 0.5, 2, 2), { flavour: 1000 })).toBe(true);
  });

  it('a box crossing the antimeridian is its two halves', () => {
    expect(plainBoxes(box(170, -10, -170, 10))).toEqual([box(170, -10, 180, 10), box(-180, -10, -170, 10)]);
    expect(meets(polygon(square(175, 0, 179, 1)), box(170, -10, -170, 10))).toBe(true);
    expect(meets(polygon(square(-179, 0, -175, 1)), box(170, -10, -170, 10))).toBe(true);
    expect(meets(polygon(square(0, 0, 1, 1)), box(170, -10, -170, 10))).toBe(false);
  });

  it('a geometry that is not a polygon is refused, not guessed', () => {
    expect(() => meets({ type: 'Point', at: [1, 1] }, box(0, 0, 2, 2))).toThrow(/not a polygon/);
  });
});
