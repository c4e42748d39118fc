/**
 * Exact sums and means of doubles computed the test's own way, independent of the server's: each
 * double split into integer × 2^exponent by its IEEE bits, the total written as an exact decimal
 * and rounded by JavaScript's (correctly rounding) number parser.
 */

function bits(x: number): { m: bigint; e: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  const fraction = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  const m = biased === 0 ? fraction : fraction | (1n << 52n);
  const e = (biased === 0 ? 1 : biased) - 1075;
  return { m: hi >>> 31 ? -m : m, e };
}

/** Σ xs as an exact `n × 2^k`. */
function exactTotal(xs: readonly number[]): { n: bigint; k: number } {
  const parts = xs.filter((x) => x !== 0).map(bits);
  if (parts.length === 0) return { n: 0n, k: 0 };
  const k = parts.reduce((least, p) => Math.min(least, p.e), Infinity);
  return { n: parts.reduce((s, p) => s + (p.m << BigInt(p.e - k)), 0n), k };
}

/** `n × 2^k / den` as decimal text with `extra` digits past its exact binary expansion (exact when den is 1). */
function decimal(n: bigint, k: number, den: bigint, extra: number): string {
  const negative = n < 0n;
  const a = negative ? -n : n;
  const places = (k < 0 ? -k : 0) + extra;
  const scaled = ((k < 0 ? a * 5n ** BigInt(-k) : a << BigInt(k)) * 10n ** BigInt(extra)) / den;
  const digits = scaled.toString().padStart(places + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, digits.length - places)}.${digits.slice(digits.length - places) || '0'}`;
}

/** The double nearest to the exact sum of `xs` (null for none). */
export function exactSum(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const { n, k } = exactTotal(xs);
  return Number(decimal(n, k, 1n, 0));
}

/** The double nearest to the exact mean of `xs` (null for none), to 60 digits past the exact sum's. */
export function exactMean(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const { n, k } = exactTotal(xs);
  return Number(decimal(n, k, BigInt(xs.length), 60));
}

/** The test's own plain left-to-right sum, the way a naive engine adds. */
export const plainSum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
