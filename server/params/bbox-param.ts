import { z } from 'zod';
import type { Box } from '../../queries/sql/box.ts';

const NUMBER_TEXT = String.raw`\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*`;
const NUMBER = new RegExp(`^${NUMBER_TEXT}$`);
/** Four numbers: also what the OpenAPI document shows as the parameter's pattern. */
const FOUR_NUMBERS = new RegExp(`^${NUMBER_TEXT}(,${NUMBER_TEXT}){3}$`);
const SYNTAX = 'must be minLon,minLat,maxLon,maxLat: four numbers in degrees (CRS84)';
/** OGC API – Features' box with heights: minLon,minLat,minHeight,maxLon,maxLat,maxHeight. */
const SIX_NUMBERS = new RegExp(`^${NUMBER_TEXT}(,${NUMBER_TEXT}){5}$`);

/** How the OGC items endpoint reads a box with heights; its API definition says the same. */
export const BOX_HEIGHTS =
  'Or six numbers, minLon,minLat,minHeight,maxLon,maxLat,maxHeight (OGC API – Features\' 3-D box): the data have no heights, so such a box selects what its horizontal box selects, whatever the heights (numbers, minHeight not above maxHeight).';

/**
 * The OGC items endpoint's `bbox` as the text BboxParam reads: four numbers as they are, six
 * (with heights) as their horizontal box. The v1 endpoints take four only.
 */
export function horizontalBoxText(text: string): { ok: true; text: string } | { ok: false; message: string } {
  if (!SIX_NUMBERS.test(text)) return FOUR_NUMBERS.test(text) ? { ok: true, text } : { ok: false, message: `${SYNTAX}, or six with minHeight and maxHeight` };
  const [minLon, minLat, minHeight, maxLon, maxLat, maxHeight] = text.split(',') as [string, string, string, string, string, string];
  if (Number(minHeight) > Number(maxHeight)) return { ok: false, message: 'minHeight must not be greater than maxHeight' };
  return { ok: true, text: [minLon, minLat, maxLon, maxLat].join(',') };
}

function checkBox(b: Box): string | null {
  if (Math.abs(b.minLat) > 90 || Math.abs(b.maxLat) > 90) return 'latitudes must lie within -90 and 90';
  if (Math.abs(b.minLon) > 180 || Math.abs(b.maxLon) > 180) return 'longitudes must lie within -180 and 180';
  if (b.minLat > b.maxLat) return 'minLat must not be greater than maxLat';
  return null;
}

/** The bbox text parsed and checked, or the message that says what is wrong with it. */
export function parseBox(text: string): Box | string {
  const parts = text.split(',');
  if (parts.length !== 4 || !parts.every((p) => NUMBER.test(p))) return SYNTAX;
  const [minLon, minLat, maxLon, maxLat] = parts.map((p) => Number(p.trim())) as [number, number, number, number];
  const box = { minLon, minLat, maxLon, maxLat };
  return checkBox(box) ?? box;
}

/** The box as meta.query, X-Query and the ETag carry it: shortest numbers, so `1.0` and `1` are one query. */
export const boxText = (b: Box): string => [b.minLon, b.minLat, b.maxLon, b.maxLat].map((v) => String(v + 0)).join(',');

export const BboxParam = z
  .string()
  .regex(FOUR_NUMBERS, SYNTAX)
  .transform((text, ctx): Box => {
    const box = parseBox(text);
    if (typeof box !== 'string') return box;
    ctx.addIssue({ code: 'custom', message: box });
    return z.NEVER;
  })
  .optional()
  .meta({
    description:
      'minLon,minLat,maxLon,maxLat in degrees (CRS84, as in OGC API Features), edges included. minLon greater than maxLon crosses the antimeridian.',
    example: '-9.5,38.5,-8.5,39.5',
  });
