/**
 * Exact sums and means of doubles: the engine sums each measure as whole numbers per binary
 * exponent (compile-aggregate.ts, `limbs`), and the total is rounded here once, to the nearest
 * double (ties to even). The result is the correctly rounded sum of the stored values, whatever
 * the order the rows were read in, the threads or the files' layout.
 */

/** An exact binary value: `scaled` × 2^`exponent`. */
export interface ExactValue {
  scaled: bigint;
  exponent: number;
}

const ZERO: ExactValue = { scaled: 0n, exponent: 0 };

/** The exact total of each lane from the `lane:e:sum` items of a group's limbs (absent lanes are zero). */
export function laneTotals(limbs: string | null, lanes: number): ExactValue[] {
  const parts: { e: number; s: bigint }[][] = Array.from({ length: lanes }, () => []);
  for (const item of limbs ? limbs.split(' ').filter(Boolean) : []) {
    const [j, e, s] = item.split(':');
    parts[Number(j)]!.push({ e: Number(e) - 52, s: BigInt(s!) });
  }
  return parts.map((p) => {
    if (p.length === 0) return ZERO;
    // A loop, not a spread: a list's length is not bounded by the stack.
    let exponent = Infinity;
    for (const x of p) exponent = Math.min(exponent, x.e);
    return { scaled: p.reduce((n, x) => n + (x.s << BigInt(x.e - exponent)), 0n), exponent };
  });
}

/**
 * Bits of a non-negative bigint. A 32-bit one by clz32; a larger one from its logarithm as a
 * double, which rounding can carry into the next power of two but never below its own: one shift
 * tells which (far cheaper than its text, which only numbers beyond a double's range need).
 */
function bitLength(n: bigint): number {
  if (n < 0x100000000n) return 32 - Math.clz32(Number(n));
  const x = Number(n);
  if (!Number.isFinite(x)) {
    const hex = n.toString(16);
    return (hex.length - 1) * 4 + (32 - Math.clz32(parseInt(hex[0]!, 16)));
  }
  const upper = Math.floor(Math.log2(x)) + 1;
  return n >> BigInt(upper - 1) === 0n ? upper - 1 : upper;
}

/** 2^e as a double, for e in [−1074, 1023] exactly (and Infinity above). */
const pow2 = (e: number): number => (e < -1022 ? 2 ** (e + 100) / 2 ** 100 : 2 ** e);

/** The double nearest to (num / den) × 2^exp2, ties to even; den > 0. */
export function roundRational(num: bigint, den: bigint, exp2: number): number {
  if (num === 0n) return 0;
  const negative = num < 0n;
  let [a, b, e] = [negative ? -num : num, den, exp2];
  // At least 55 bits of quotient: 53 kept, one to round by, and the rest with the remainder as sticky.
  const shift = 55 + bitLength(b) - bitLength(a);
  if (shift > 0) [a, e] = [a << BigInt(shift), e - shift];
  else [b, e] = [b << BigInt(-shift), e - shift];
  const q = a / b;
  const sticky = a % b !== 0n;
  // q has 55 or 56 bits: with the remainder folded into its last bit (two below where it is
  // rounded), Number() rounds it as the whole quotient, and a power of two scales a normal result exactly.
  const quick = Number(sticky ? q | 1n : q) * pow2(e);
  if (Number.isFinite(quick) && quick >= 2 ** -1022) return negative ? -quick : quick;
  // Below 2^−1074 nothing is representable: subnormal results keep fewer bits.
  const drop = Math.max(bitLength(q) - 53, -1074 - e);
  const kept = q >> BigInt(drop);
  const rest = q - (kept << BigInt(drop));
  const half = 1n << BigInt(drop - 1);
  const up = rest > half || (rest === half && (sticky || (kept & 1n) === 1n));
  const value = Number(up ? kept + 1n : kept) * pow2(e + drop);
  return negative ? -value : value;
}

/**
 * The correctly rounded value of an exact total. Number() of a bigint rounds to nearest, ties to
 * even, and a power of two scales a double exactly while the result stays normal: one rounding.
 */
export function exactDouble(v: ExactValue): number {
  const quick = Number(v.scaled) * pow2(Math.max(-1074, Math.min(1023, v.exponent)));
  const normal = Math.abs(quick) >= 2 ** -1022 && Number.isFinite(quick) && v.exponent >= -1074 && v.exponent <= 1023;
  return normal || (quick === 0 && v.scaled === 0n) ? quick : roundRational(v.scaled, 1n, v.exponent);
}

/** Integers of at most 53 bits: a double holds them exactly. */
const EXACT_BELOW = 2n ** 53n;

/**
 * The double nearest to the mean `v` ÷ `count` (count a whole number below 2^53). When the total's
 * integer is a double exactly, its division by the count is one IEEE division, itself correctly
 * rounded, and scaling it by a power of two is exact when the product is finite and above 2^−1022.
 * A product of exactly 2^−1022 may be a quotient rounded up to it, whose mean lies among the
 * subnormals and rounds to one of them: it, like every other case (more bits, a subnormal or
 * infinite result), is rounded from integers.
 */
export function exactMean(v: ExactValue, count: number): number {
  const t = v.scaled;
  if (v.exponent >= -1074 && v.exponent <= 1023) {
    const m = t < EXACT_BELOW && t > -EXACT_BELOW ? Number(t) / count : wideQuotient(t, count);
    const quick = m === null ? Infinity : m * pow2(v.exponent);
    if (Number.isFinite(quick) && Math.abs(quick) > 2 ** -1022) return quick;
  }
  return roundRational(t, BigInt(count), v.exponent);
}

const BITS_F64 = new Float64Array(1);
const BITS_U32 = new Uint32Array(BITS_F64.buffer);
BITS_F64[0] = 1;
if (BITS_U32[1] !== 0x3ff00000) throw new Error('exact-sum.ts reads a double as two little-endian 32-bit words');
/** The step between normal doubles of each biased exponent: 2^(biased − 1075). */
const STEPS = Array.from({ length: 2047 }, (_, biased) => pow2(biased - 1075));

/**
 * The double nearest to t ÷ n (ties to even) for 2^53 ≤ |t| < 2^99 and n < 2^40, with two
 * integer operations where roundRational needs about ten: t is split into two doubles (exactly,
 * at this size), q = hi ÷ n is rounded once, and the exact remainder t − q·n (its terms all whole
 * multiples of q's step or of 1, and small: their double sum is exact) says on which side of the
 * midpoint to q's neighbour the quotient lies. Null outside these bounds, or when the quotient is
 * a whole step or more from q (roundRational then).
 */
function wideQuotient(t: bigint, n: number): number | null {
  const signed = Number(t);
  const hi = Math.abs(signed);
  if (hi >= 2 ** 99 || n >= 2 ** 40) return null;
  const lo = Number(t - BigInt(signed)) * Math.sign(signed);
  const q = hi / n;
  // q·n exactly as p + pe: Dekker's product of Veltkamp halves (2^27 + 1), inline (no pair built per call).
  const p = q * n;
  const cq = 134217729 * q;
  const cn = 134217729 * n;
  const qh = cq - (cq - q);
  const nh = cn - (cn - n);
  const ql = q - qh;
  const nl = n - nh;
  const pe = qh * nh - p + qh * nl + ql * nh + ql * nl;
  const r = hi - p - pe + lo;
  // q's bits (little-endian words): its step is 2^(exponent − 52); a power of two has no mantissa bits.
  BITS_F64[0] = q;
  const up = STEPS[BITS_U32[1]! >>> 20]!;
  const power = BITS_U32[0] === 0 && (BITS_U32[1]! & 0xfffff) === 0;
  // Just below a power of two the doubles are twice as close.
  const step = r > 0 ? up : power ? -up / 2 : -up;
  const twice = 2 * Math.abs(r);
  const width = n * Math.abs(step);
  if (twice >= 2 * width) return null;
  const even = (BITS_U32[0]! & 1) === 0;
  const m = twice > width || (twice === width && !even) ? q + step : q;
  return signed < 0 ? -m : m;
}
