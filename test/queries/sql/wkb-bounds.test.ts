import { describe, expect, it } from 'vitest';
import { extendBox, unionBox, wkbBounds } from '../../../queries/sql/wkb-bounds.ts';
import { square, writeWkb, type Geom } from './wkb-writer.ts';

const bounds = (g: Geom, o?: Parameters<typeof writeWkb>[1]) => wkbBounds(writeWkb(g, o), null);

describe('wkbBounds', () => {
  it('holds every position of polygons, multi-geometries and collections, in either byte order', () => {
    const multi: Geom = {
      type: 'MultiPolygon',
      members: [
        { type: 'Polygon', at: [square(23.9, 38.1, 24.0, 38.2), square(23.92, 38.12, 23.94, 38.14)] },
        { type: 'Polygon', at: [square(-9.5, 36.9, -9.1, 37.3)] },
      ],
    };
    expect(bounds(multi)).toEqual([-9.5, 36.9, 24.0, 38.2]);
    expect(bounds(multi, { bigEndian: true })).toEqual([-9.5, 36.9, 24.0, 38.2]);
    const collection: Geom = { type: 'GeometryCollection', members: [{ type: 'Point', at: [10, -20] }, { type: 'LineString', at: [[-1, 2], [3, 4]] }, multi] };
    expect(bounds(collection)).toEqual([-9.5, -20, 24.0, 38.2]);
  });

  it('skips Z and M values; leaves out empty points, NaN, infinite and off-globe positions', () => {
    expect(bounds({ type: 'LineString', at: [[1, 2, 500], [3, 4, -500]] }, { flavour: 1000 })).toEqual([1, 2, 3, 4]);
    expect(bounds({ type: 'LineString', at: [[1, 2, 7, 8], [3, 4, 9, 10]] }, { flavour: 3000 })).toEqual([1, 2, 3, 4]);
    expect(bounds({ type: 'LineString', at: [[1, 2, 99], [3, 4, -99]] }, { flavour: 2000 })).toEqual([1, 2, 3, 4]);
    expect(bounds({ type: 'Point', at: [NaN, NaN] })).toBeNull();
    expect(bounds({ type: 'MultiPoint', members: [{ type: 'Point', at: [Infinity, 0] }, { type: 'Point', at: [200, 10] }, { type: 'Point', at: [5, -91] }, { type: 'Point', at: [5, 6] }] })).toEqual([5, 6, 5, 6]);
    expect(wkbBounds(new Uint8Array(), [1, 2, 3, 4])).toEqual([1, 2, 3, 4]);
  });

  it('grows the box it is given and throws on a geometry cut short or of an unknown type', () => {
    expect(wkbBounds(writeWkb({ type: 'Point', at: [50, 60] }), [0, 0, 1, 1])).toEqual([0, 0, 50, 60]);
    const polygon = writeWkb({ type: 'Polygon', at: [square(0, 0, 1, 1)] });
    expect(() => wkbBounds(polygon.subarray(0, polygon.length - 4), null)).toThrow();
    const unknown = Uint8Array.from(polygon);
    unknown[1] = 9;
    expect(() => wkbBounds(unknown, null)).toThrow(/unsupported WKB geometry type/);
  });

  it('unionBox and extendBox', () => {
    expect(unionBox(null, null)).toBeNull();
    expect(unionBox([0, 0, 1, 1], null)).toEqual([0, 0, 1, 1]);
    expect(unionBox([0, 0, 1, 1], [-5, 0.5, 0.5, 7])).toEqual([-5, 0, 1, 7]);
    expect(extendBox(null, 180, -90)).toEqual([180, -90, 180, -90]);
    expect(extendBox(null, 180.000001, 0)).toBeNull();
  });
});
