/**
 * Doubles as the data endpoints write them (sql.ts numberText and jsonText, done there by DuckDB),
 * for values computed in JavaScript: integral values under 1e15 without a fraction, non-finite
 * values as null, otherwise the shortest round-trip digits in DuckDB's spelling.
 */

const integral = (x: number): boolean => x === Math.trunc(x) && Math.abs(x) < 1e15;

/**
 * A finite number's shortest round-trip spelling, String(x)'s: JSON.stringify gives the same text
 * as a short-lived string, where String (and a template) puts every new number's text in V8's
 * number cache, in the heap's old space, kept until a full collection: a body of millions of
 * numbers piled up there at about the rate it was written.
 */
export const spelled = (x: number): string => JSON.stringify(x);

/** The spellings of 0 to 4095: the counts of most groups, spelled once. */
const SMALL = Array.from({ length: 4096 }, (_, i) => spelled(i));

/** A whole number's spelling (a count), the small ones looked up. */
export const countText = (x: number): string => (x >= 0 && x < SMALL.length && Number.isInteger(x) ? SMALL[x]! : spelled(x));

/** Sign, shortest significant digits and decimal exponent of a finite non-zero double. */
function shortest(x: number): { sign: string; digits: string; exponent: number } {
  const [mantissa, exponent] = Math.abs(x).toExponential().split('e') as [string, string];
  return { sign: x < 0 ? '-' : '', digits: mantissa.replace('.', ''), exponent: Number(exponent) };
}

/**
 * CSV: DuckDB's CAST(DOUBLE AS VARCHAR), which spells numbers as Python's repr does: plain
 * notation for decimal exponents from −4 to 15 (with `.0` when nothing follows the point),
 * otherwise `d.ddde±XX`. Null for NaN and infinities.
 */
export function csvNumber(x: number): string | null {
  if (!Number.isFinite(x)) return null;
  if (integral(x)) return spelled(x === 0 ? 0 : x);
  // Between 1e-4 and 1e15 both spell the shortest digits plainly, and a non-integral value has a point.
  if (Math.abs(x) >= 1e-4 && Math.abs(x) < 1e15) return spelled(x);
  const { sign, digits, exponent } = shortest(x);
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
    return `${sign}${digits.slice(0, exponent + 1).padEnd(exponent + 1, '0')}.${digits.slice(exponent + 1) || '0'}`;
  }
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${mantissa}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

/** GeoJSON: DuckDB's to_json, which is JavaScript's spelling with `e` for `e+` and `.0` after an integral plain number; `null` when not finite. */
export function jsonNumber(x: number): string {
  if (!Number.isFinite(x)) return 'null';
  if (integral(x)) return spelled(x === 0 ? 0 : x);
  const text = spelled(x).replace('e+', 'e');
  return /[.e]/.test(text) ? text : `${text}.0`;
}
