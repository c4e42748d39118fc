/**
 * Exact sums and means of doubles: the engine sums nearly every value of a measure as whole
 * numbers at one exponent (exact-sum-sql.ts), the rare others are added here exactly
 * (exactSumOf), and the total is rounded here once, to the nearest double (ties to even). The result is the correctly rounded sum of the stored values, whatever
 * the order the rows were read in, the threads or the files' layout.
 */

/** An exact binary value: `scaled` × 2^`exponent`. */
export interface ExactValue {
  scaled: bigint;
  exponent: number;
}

/**
 * An exact binary value as the engine sends a common lane's total: (`high` × 2^40 + `low`) ×
 * 2^`exponent`, both whole numbers and doubles exactly (−2^52 ≤ high < 2^52, 0 ≤ low < 2^40). Rounded
 * with a few double operations, no bigint.
 */
export interface PairValue {
  high: number;
  low: number;
  exponent: number;
}

/** A lane's total, either way. */
export type LaneTotal = ExactValue | PairValue;

const TWO_40 = 2 ** 40;

/** A total as one integer (what totals are added as). */
export const exactOf = (v: LaneTotal): ExactValue => ('scaled' in v ? v : { scaled: BigInt(v.high) * BigInt(TWO_40) + BigInt(v.low), exponent: v.exponent });

/** Zero, as an exact total (a lane without values). */
export const ZERO: ExactValue = { scaled: 0n, exponent: 0 };

/** Exact totals added: the integers aligned on the smaller exponent. */
export function addExact(x: LaneTotal, y: LaneTotal): ExactValue {
  const [a, b] = [exactOf(x), exactOf(y)];
  if (b.scaled === 0n) return a;
  if (a.scaled === 0n) return b;
  const exponent = Math.min(a.exponent, b.exponent);
  return { scaled: (a.scaled << BigInt(a.exponent - exponent)) + (b.scaled << BigInt(b.exponent - exponent)), exponent };
}

/** Words of the accumulator below: 32 bits each, the first at 2^−1074 (a double's least step), past the largest double's top. */
const WORDS = 67;
/** Values added before the words are folded into bigints: each adds less than 2^33 to a word, so a word stays below 2^52 (exact). */
const FOLD_EVERY = 2 ** 19;
const TWO_32 = 2 ** 32;

/**
 * The exact total of finite doubles (the rare values of a group, exact-sum-sql.ts), whatever
 * their order. Each value x = ±M × 2^E (M its 53-bit significand) is placed by E on 32-bit words
 * counted from 2^−1074: its word k = ⌊(E + 1074) / 32⌋ and shift s, M × 2^s cut into three 32-bit
 * pieces added to words k, k + 1, k + 2 as doubles (every step exact), folded into bigints every
 * 2^19 values. No bigint per value.
 */
export function exactSumOf(values: ArrayLike<number>): ExactValue {
  const words = new Float64Array(WORDS);
  let total = 0n;
  let used = 0;
  const fold = () => {
    for (let j = WORDS - 1; j >= 0; j--) total += BigInt(words[j]!) << BigInt(32 * j);
    words.fill(0);
  };
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    if (x === 0 || !Number.isFinite(x)) continue;
    BITS_F64[0] = x;
    const high = BITS_U32[1]!;
    const biased = (high >>> 20) & 0x7ff;
    // The significand as m1 × 2^32 + m0, and E + 1074 (a subnormal's E is −1074, with no implicit bit).
    const m1 = (high & 0xfffff) + (biased === 0 ? 0 : 0x100000);
    const m0 = BITS_U32[0]!;
    const at = biased === 0 ? 0 : biased - 1;
    const k = at >>> 5;
    const scale = POW2[(at & 31) + 1074]!;
    const sign = high >>> 31 === 1 ? -1 : 1;
    // m0 × 2^s and m1 × 2^s: below 2^64 and 2^53, each cut at 2^32 (floor and difference of doubles are exact here).
    const low = m0 * scale;
    const lowTop = Math.floor(low / TWO_32);
    const mid = m1 * scale;
    const midTop = Math.floor(mid / TWO_32);
    words[k] = words[k]! + sign * (low - lowTop * TWO_32);
    words[k + 1] = words[k + 1]! + sign * (lowTop + (mid - midTop * TWO_32));
    words[k + 2] = words[k + 2]! + sign * midTop;
    if (++used === FOLD_EVERY) (fold(), (used = 0));
  }
  if (used > 0) fold();
  return total === 0n ? ZERO : { scaled: total, exponent: -1074 };
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
const pow2Of = (e: number): number => (e < -1022 ? 2 ** (e + 100) / 2 ** 100 : 2 ** e);
/** 2^e for every e a double reaches, looked up: `**` is a call into the runtime, once per value here. */
const POW2 = Float64Array.from({ length: 2098 }, (_, i) => pow2Of(i - 1074));
const pow2 = (e: number): number => (e >= -1074 && e <= 1023 ? POW2[e + 1074]! : pow2Of(e));

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
 * even (as one addition of a paired total's two doubles does), and a power of two scales a double
 * exactly while the result stays normal: one rounding.
 */
export function exactDouble(total: LaneTotal): number {
  return 'scaled' in total ? bigDouble(total) : pairDouble(total.high, total.low, total.exponent);
}

/** x × 2^exponent when that scaling is exact (x the rounded total: a normal, finite result), or zero for zero; null otherwise. */
function scaled(x: number, exponent: number): number | null {
  if (x === 0) return 0;
  const quick = x * pow2(Math.max(-1074, Math.min(1023, exponent)));
  return Math.abs(quick) >= 2 ** -1022 && Number.isFinite(quick) && exponent >= -1074 && exponent <= 1023 ? quick : null;
}

/** exactDouble of a paired total (two doubles): its nearest double is one addition. */
export function pairDouble(high: number, low: number, exponent: number): number {
  return scaled(high * TWO_40 + low, exponent) ?? bigDouble(exactOf({ high, low, exponent }));
}

function bigDouble(v: ExactValue): number {
  return scaled(Number(v.scaled), v.exponent) ?? roundRational(v.scaled, 1n, v.exponent);
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
export function exactMean(total: LaneTotal, count: number): number {
  if (!('scaled' in total)) return pairMean(total.high, total.low, total.exponent, count);
  const m = total.exponent >= -1074 && total.exponent <= 1023 ? bigQuotient(total.scaled, count) : null;
  return meanOf(m, total, count);
}

/** The mean from the quotient m of the total's integer by the count (null: none rounded), else from integers. */
function meanOf(m: number | null, total: LaneTotal, count: number): number {
  const quick = m === null ? Infinity : m * pow2(total.exponent);
  if (Number.isFinite(quick) && Math.abs(quick) > 2 ** -1022) return quick;
  const v = exactOf(total);
  return roundRational(v.scaled, BigInt(count), v.exponent);
}

/**
 * exactMean of a paired total: its nearest double s is one addition, the exact rest Knuth's
 * two-sum; s ÷ count is one division when s is the total exactly (rest 0, below 2^53), else
 * rounded from s and the rest as wideQuotient does.
 */
export function pairMean(high: number, low: number, exponent: number, count: number): number {
  const a = high * TWO_40;
  const s = a + low;
  const b = s - a;
  const rest = a - (s - b) + (low - b);
  const m = exponent < -1074 || exponent > 1023 ? null : rest === 0 && Math.abs(s) < 2 ** 53 ? s / count : pairQuotient(s, rest, count);
  if (m !== null) {
    const quick = m * pow2(exponent);
    if (Number.isFinite(quick) && Math.abs(quick) > 2 ** -1022) return quick;
  }
  return meanOf(null, { high, low, exponent }, count);
}

/** t ÷ n rounded once, or null (roundRational then). */
const bigQuotient = (t: bigint, n: number): number | null => (t < EXACT_BELOW && t > -EXACT_BELOW ? Number(t) / n : wideQuotient(t, n));

const BITS_F64 = new Float64Array(1);
const BITS_U32 = new Uint32Array(BITS_F64.buffer);
BITS_F64[0] = 1;
if (BITS_U32[1] !== 0x3ff00000) throw new Error('exact-sum.ts reads a double as two little-endian 32-bit words');
/** The step between normal doubles of each biased exponent: 2^(biased − 1075). */
const STEPS = Array.from({ length: 2047 }, (_, biased) => pow2Of(biased - 1075));

/**
 * The double nearest to t ÷ n (ties to even) for 2^53 ≤ |t| < 2^99 and n < 2^40, with two
 * integer operations where roundRational needs about ten: t is cut into two doubles (exactly,
 * at this size), q = hi ÷ n is rounded once, and the exact remainder t − q·n (its terms all whole
 * multiples of q's step or of 1, and small: their double sum is exact) says on which side of the
 * midpoint to q's neighbour the quotient lies. Null outside these bounds, or when the quotient is
 * a whole step or more from q (roundRational then).
 */
function wideQuotient(t: bigint, n: number): number | null {
  const signed = Number(t);
  return Math.abs(signed) >= 2 ** 99 ? null : pairQuotient(signed, Number(t - BigInt(signed)), n);
}

/** wideQuotient of t given as `signed`, the double nearest to it, and the exact rest t − signed. */
function pairQuotient(signed: number, rest: number, n: number): number | null {
  const hi = Math.abs(signed);
  if (hi >= 2 ** 99 || n >= 2 ** 40) return null;
  const lo = rest * Math.sign(signed);
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
