/**
 * WKB (ISO, either byte order, 2D/Z/M/ZM) to GeoJSON geometry text. DuckDB's spatial extension
 * cannot be installed here, so the GeoParquet geometry DuckDB reads is decoded in JavaScript,
 * straight to text without intermediate objects.
 */
const TYPES = ['', 'Point', 'LineString', 'Polygon', 'MultiPoint', 'MultiLineString', 'MultiPolygon', 'GeometryCollection'];

export class Reader {
  offset = 0;
  little = true;
  constructor(private readonly view: DataView) {}
  u8(): number {
    return this.view.getUint8(this.offset++);
  }
  u32(): number {
    const v = this.view.getUint32(this.offset, this.little);
    this.offset += 4;
    return v;
  }
  f64(): number {
    const v = this.view.getFloat64(this.offset, this.little);
    this.offset += 8;
    return v;
  }
}

const num = (v: number): string => (Number.isFinite(v) ? String(v) : 'null');

function position(r: Reader, dims: number, hasZ: boolean): string {
  const x = r.f64();
  const y = r.f64();
  const z = hasZ ? r.f64() : NaN;
  for (let i = hasZ ? 3 : 2; i < dims; i++) r.f64(); // M is not part of GeoJSON
  return hasZ ? `[${num(x)},${num(y)},${num(z)}]` : `[${num(x)},${num(y)}]`;
}

function positions(r: Reader, dims: number, hasZ: boolean): string {
  const n = r.u32();
  const parts = new Array<string>(n);
  for (let i = 0; i < n; i++) parts[i] = position(r, dims, hasZ);
  return `[${parts.join(',')}]`;
}

function rings(r: Reader, dims: number, hasZ: boolean): string {
  const n = r.u32();
  const parts = new Array<string>(n);
  for (let i = 0; i < n; i++) parts[i] = positions(r, dims, hasZ);
  return `[${parts.join(',')}]`;
}

/** Reads one geometry with its header and returns its GeoJSON text. */
function geometry(r: Reader): string {
  r.little = r.u8() === 1;
  const code = r.u32();
  const base = code % 1000;
  const flavour = Math.floor(code / 1000); // 0 XY, 1 XYZ, 2 XYM, 3 XYZM
  const type = TYPES[base];
  if (!type || flavour > 3) throw new Error(`unsupported WKB geometry type ${code}`);
  const hasZ = flavour === 1 || flavour === 3;
  const dims = 2 + (hasZ ? 1 : 0) + (flavour >= 2 ? 1 : 0);
  if (base === 1) {
    const p = position(r, dims, hasZ);
    // An empty point is written as NaN coordinates.
    return p.startsWith('[null,null') ? `{"type":"Point","coordinates":[]}` : `{"type":"Point","coordinates":${p}}`;
  }
  if (base === 2) return `{"type":"LineString","coordinates":${positions(r, dims, hasZ)}}`;
  if (base === 3) return `{"type":"Polygon","coordinates":${rings(r, dims, hasZ)}}`;
  const n = r.u32();
  const members = new Array<string>(n);
  for (let i = 0; i < n; i++) members[i] = base === 7 ? geometry(r) : memberCoordinates(r);
  return base === 7
    ? `{"type":"GeometryCollection","geometries":[${members.join(',')}]}`
    : `{"type":"${type}","coordinates":[${members.join(',')}]}`;
}

/** A member of a Multi* geometry carries its own header; only its coordinates are kept. */
function memberCoordinates(r: Reader): string {
  const text = geometry(r);
  return text.slice(text.indexOf('"coordinates":') + 14, -1);
}

export function wkbToGeoJson(wkb: Uint8Array | null | undefined): string {
  if (!wkb || wkb.length === 0) return 'null';
  return geometry(new Reader(new DataView(wkb.buffer, wkb.byteOffset, wkb.byteLength)));
}
