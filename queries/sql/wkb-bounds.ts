import { Reader } from './wkb.ts';

/** A bounding box in CRS84: [minLon, minLat, maxLon, maxLat]. */
export type Box = [number, number, number, number];

/** Grows `box` (or starts one) to hold the point; coordinates that are not finite, or off the globe, are left out. */
export function extendBox(box: Box | null, x: number, y: number): Box | null {
  if (!(x >= -180 && x <= 180 && y >= -90 && y <= 90)) return box;
  if (!box) return [x, y, x, y];
  if (x < box[0]) box[0] = x;
  if (y < box[1]) box[1] = y;
  if (x > box[2]) box[2] = x;
  if (y > box[3]) box[3] = y;
  return box;
}

/** The smallest box holding both (either may be null: nothing). */
export function unionBox(a: Box | null, b: Box | null): Box | null {
  if (!a || !b) return a ? [...a] : b ? [...b] : null;
  return [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])];
}

/** Every position of one geometry (its header first) into the box. */
function walk(r: Reader, box: Box | null): Box | null {
  r.little = r.u8() === 1;
  const code = r.u32();
  const base = code % 1000;
  const flavour = Math.floor(code / 1000); // 0 XY, 1 XYZ, 2 XYM, 3 XYZM
  if (base < 1 || base > 7 || flavour > 3) throw new Error(`unsupported WKB geometry type ${code}`);
  const extra = (flavour === 0 ? 0 : flavour === 3 ? 2 : 1) * 8;
  const position = () => {
    const x = r.f64();
    const y = r.f64();
    r.offset += extra;
    box = extendBox(box, x, y);
  };
  const positions = () => {
    for (let n = r.u32(); n > 0; n--) position();
  };
  if (base === 1) position();
  else if (base === 2) positions();
  else if (base === 3) for (let n = r.u32(); n > 0; n--) positions();
  else for (let n = r.u32(); n > 0; n--) box = walk(r, box);
  return box;
}

/**
 * Grows `box` to hold every position of a WKB geometry (ISO, either byte order, 2D/Z/M/ZM).
 * Empty geometries (NaN points, no rings) add nothing; a geometry cut short throws.
 */
export function wkbBounds(wkb: Uint8Array, box: Box | null): Box | null {
  if (wkb.length === 0) return box;
  return walk(new Reader(new DataView(wkb.buffer, wkb.byteOffset, wkb.byteLength)), box);
}
