import { DuckDBBlobValue, DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { wktToGeoJSON } from 'betterknown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wkbToGeoJson } from '../../../queries/sql/wkb.ts';
import { writeWkb, type Geom } from './wkb-writer.ts';

let instance: DuckDBInstance;
let c: DuckDBConnection;
beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  c = await instance.connect();
});
afterAll(() => {
  c.closeSync();
  instance.closeSync();
});

/** The independent oracle: DuckDB parses the WKB and writes WKT, betterknown turns the WKT into GeoJSON. */
async function duck(wkb: Uint8Array): Promise<{ wkt: string; oracle: unknown; normalised: Uint8Array }> {
  const hex = Buffer.from(wkb).toString('hex');
  const rows = (await c.runAndReadAll('SELECT ST_AsText(ST_GeomFromWKB(from_hex($1))), ST_AsWKB(ST_GeomFromWKB(from_hex($1)))', [hex])).getRows();
  const [wkt, blob] = rows[0] as [string, DuckDBBlobValue];
  return { wkt, oracle: wktToGeoJSON(wkt), normalised: blob.bytes };
}

const ring = (x: number, y: number, d: number) => [[x, y], [x + d, y], [x + d, y + d], [x, y + d], [x, y]];
const point: Geom = { type: 'Point', at: [-8.25, 39.5] };
const line: Geom = { type: 'LineString', at: [[1 / 3, -8.123456789012345], [1e-7, 2], [-180, 90]] };
const holed: Geom = { type: 'Polygon', at: [ring(0, 0, 10), ring(2, 2, 1).reverse()] };
const square: Geom = { type: 'Polygon', at: [ring(20, 20, 0.5)] };

const CASES: [string, Geom][] = [
  ['Point', point],
  ['LineString', line],
  ['Polygon with a hole', holed],
  ['MultiPoint', { type: 'MultiPoint', members: [point, { type: 'Point', at: [1, 2] }] }],
  ['MultiLineString', { type: 'MultiLineString', members: [line, { type: 'LineString', at: [[0, 0], [1, 1]] }] }],
  ['MultiPolygon', { type: 'MultiPolygon', members: [holed, square] }],
  ['GeometryCollection', { type: 'GeometryCollection', members: [point, line, holed, { type: 'GeometryCollection', members: [square] }] }],
];

describe('wkbToGeoJson agrees with DuckDB ST_AsText parsed by betterknown', () => {
  for (const bigEndian of [false, true]) {
    it.each(CASES)(`%s (${bigEndian ? 'big' : 'little'}-endian)`, async (_name, g) => {
      const wkb = writeWkb(g, { bigEndian });
      const { oracle } = await duck(wkb);
      expect(JSON.parse(wkbToGeoJson(wkb))).toEqual(oracle);
    });
  }

  it.each(CASES)('%s as DuckDB writes it back with ST_AsWKB (the bytes the server decodes)', async (_name, g) => {
    const { oracle, normalised } = await duck(writeWkb(g, { bigEndian: true }));
    expect(JSON.parse(wkbToGeoJson(normalised))).toEqual(oracle);
  });

  const xyz = (g: Geom): Geom =>
    g.type === 'Point' ? { type: g.type, at: [...g.at, 7] }
    : g.type === 'LineString' ? { type: g.type, at: g.at.map((p) => [...p, 7]) }
    : g.type === 'Polygon' ? { type: g.type, at: g.at.map((r) => r.map((p) => [...p, 7])) }
    : { type: g.type, members: g.members.map(xyz) };

  it.each(CASES)('%s with Z coordinates keeps Z', async (_name, g) => {
    for (const bigEndian of [false, true]) {
      const wkb = writeWkb(xyz(g), { bigEndian, flavour: 1000 });
      const { oracle } = await duck(wkb);
      expect(JSON.stringify(oracle)).toContain(',7]');
      expect(JSON.parse(wkbToGeoJson(wkb))).toEqual(oracle);
    }
  });

  it('drops M (not part of GeoJSON) from an XYM point', async () => {
    const wkb = writeWkb({ type: 'Point', at: [1, 2, 99] }, { flavour: 2000 });
    expect((await duck(wkb)).oracle).toEqual({ type: 'Point', coordinates: [1, 2] });
    expect(JSON.parse(wkbToGeoJson(wkb))).toEqual({ type: 'Point', coordinates: [1, 2] });
  });

  it('keeps Z and drops M of an XYZM line string, reading every ordinate', () => {
    const wkb = writeWkb({ type: 'LineString', at: [[1, 2, 3, 4], [5, 6, 7, 8]] }, { flavour: 3000, bigEndian: true });
    expect(JSON.parse(wkbToGeoJson(wkb))).toEqual({ type: 'LineString', coordinates: [[1, 2, 3], [5, 6, 7]] });
  });

  it('writes an empty point (NaN coordinates) as a Point with empty coordinates (RFC 7946 3.1)', async () => {
    for (const [bigEndian, flavour] of [[false, 0], [true, 0], [false, 1000]] as const) {
      const wkb = writeWkb({ type: 'Point', at: flavour ? [NaN, NaN, NaN] : [NaN, NaN] }, { bigEndian, flavour });
      expect((await duck(wkb)).wkt).toMatch(/^POINT (Z )?EMPTY$/);
      expect(JSON.parse(wkbToGeoJson(wkb))).toEqual({ type: 'Point', coordinates: [] });
    }
  });

  it('reads members whose byte order differs from their collection', async () => {
    const member = writeWkb(square);
    const header = Buffer.from([0, 0, 0, 0, 6, 0, 0, 0, 1]); // big-endian MultiPolygon, one member
    const wkb = Uint8Array.from([...header, ...member]);
    const { oracle } = await duck(wkb);
    expect(JSON.parse(wkbToGeoJson(wkb))).toEqual(oracle);
  });
});

describe('wkbToGeoJson edge input', () => {
  it.each([
    ['null', null],
    ['undefined', undefined],
    ['an empty blob', new Uint8Array(0)],
  ])('%s gives the JSON null geometry', (_what, input) => {
    expect(wkbToGeoJson(input)).toBe('null');
  });

  it('reads a view that starts inside a larger buffer (byteOffset honoured)', () => {
    const wkb = writeWkb(holed, { bigEndian: true });
    const backing = new Uint8Array(wkb.length + 7).fill(0xee);
    backing.set(wkb, 3);
    expect(JSON.parse(wkbToGeoJson(backing.subarray(3, 3 + wkb.length)))).toEqual({
      type: 'Polygon',
      coordinates: [ring(0, 0, 10), ring(2, 2, 1).reverse()],
    });
  });

  it('throws on a geometry type GeoJSON cannot express instead of writing garbage', () => {
    const triangle = Uint8Array.from([1, 17, 0, 0, 0, 0, 0, 0, 0]);
    expect(() => wkbToGeoJson(triangle)).toThrow(/unsupported/);
  });

  it('throws on truncated WKB instead of writing a partial geometry', () => {
    const wkb = writeWkb(holed);
    expect(() => wkbToGeoJson(wkb.subarray(0, wkb.length - 4))).toThrow();
  });
});
