import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { col } from '../../../datasets/index.ts';
import { jsonText, numberText } from '../../../queries/sql/sql.ts';
import { exactDouble, exactMean as meanOfTotal, exactSumOf, roundRational, type LaneTotal } from '../../../queries/exact/exact-sum.ts';
import { csvNumber, jsonNumber } from '../../../queries/encode/number-text.ts';
import { exactMean, exactSum, plainSum } from '../../helpers/exact.ts';

/** A deterministic generator of doubles across magnitudes, subnormals and signs included. */
function doubles(seed: number, count: number): number[] {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0), s / 2 ** 32);
  const view = new DataView(new ArrayBuffer(8));
  const out = [0.1, 0.2, 0.3, 1e16, -1e16, 1, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308 / 4, 1e15 + 0.5, 1e-7, 1.5e-5, 1e21, 123456.789];
  while (out.length < count) {
    view.setUint32(0, next() * 2 ** 32);
    view.setUint32(4, next() * 2 ** 32);
    const raw = view.getFloat64(0);
    if (Number.isFinite(raw) && Math.abs(raw) < 1e300) out.push(raw);
    out.push((next() - 0.5) * 10 ** Math.floor(next() * 40 - 20), Math.round(next() * 1e6) / 100);
  }
  return out;
}

describe('exact sums and means, rounded once', () => {
  it('a sum of ten 0.1 is 1, where adding them in any order gives 0.9999999999999999', () => {
    const tenths = Array<number>(10).fill(0.1);
    expect(plainSum(tenths)).toBe(0.9999999999999999);
    expect(exactDouble(exactSumOf(tenths))).toBe(1);
    expect(exactSum(tenths)).toBe(1);
  });

  it('big values that cancel leave the small ones exactly', () => {
    const xs = [1e16, 1, 1, 1, -1e16];
    expect(plainSum(xs)).not.toBe(3);
    expect(exactDouble(exactSumOf(xs))).toBe(3);
  });

  it('equals the test\'s independent exact computation on 3,000 doubles of every magnitude, in any order', () => {
    const xs = doubles(27, 3000);
    const expected = exactSum(xs);
    for (const order of [xs, [...xs].reverse(), [...xs].sort((a, b) => a - b)]) expect(exactDouble(exactSumOf(order))).toBe(expected);
    for (let i = 0; i < 300; i += 7) {
      const slice = xs.slice(i, i + 1 + (i % 13));
      const total = exactSumOf(slice);
      expect(exactDouble(total)).toBe(exactSum(slice));
      expect(roundRational(total.scaled, BigInt(slice.length), total.exponent)).toBe(exactMean(slice));
    }
  });

  it('rounds ties to even, subnormal results and overflow as IEEE does', () => {
    expect(roundRational((1n << 53n) + 1n, 1n, 0)).toBe(2 ** 53);
    expect(roundRational((1n << 53n) + 3n, 1n, 0)).toBe(2 ** 53 + 4);
    expect(roundRational(3n, 1n, -1076)).toBe(5e-324);
    expect(roundRational(1n, 1n, -1075)).toBe(0);
    expect(roundRational(1n, 1n, 1024)).toBe(Infinity);
    expect(roundRational(-7n, 2n, 0)).toBe(-3.5);
    expect(roundRational(1n, 3n, 0)).toBe(1 / 3);
  });

  it('adds a list longer than any call\'s arguments could be, past the point where it folds its words (2^19 values)', () => {
    const xs = Array.from({ length: 1_200_000 }, (_, i) => (i % 2 ? 2 ** -100 : 2 ** -132));
    expect(exactDouble(exactSumOf(xs))).toBe(600_000 * 2 ** -100 + 600_000 * 2 ** -132);
    // Every bit of the significand set, at the top of its word (2^45 is 31 bits above a word's start, counted from 2^−1074):
    // each value's three pieces at their largest, the words near their bound at each fold.
    const top = (2 ** 53 - 1) * 2 ** 45;
    const many = Array.from({ length: 1_100_000 }, (_, i) => (i === 700_000 ? 1 : top));
    expect(exactSumOf(many)).toEqual({ scaled: 1_099_999n * (2n ** 53n - 1n) * 2n ** (45n + 1074n) + 2n ** 1074n, exponent: -1074 });
  });

  it('adds the extremes exactly: subnormals, the largest double and its negative, signs that cancel, zeros and non-finite values left out', () => {
    const max = Number.MAX_VALUE;
    expect(exactDouble(exactSumOf([max, -max, 5e-324, 5e-324, 0, -0, NaN, Infinity]))).toBe(1e-323);
    expect(exactSumOf([max, max]).scaled).toBe(2n * (2n ** 53n - 1n) * 2n ** BigInt(971 + 1074));
    expect(exactSumOf([-5e-324, 2.2250738585072014e-308])).toEqual({ scaled: 2n ** 52n - 1n, exponent: -1074 });
    expect(exactSumOf([])).toEqual(exactSumOf([0, NaN]));
  });
});

describe('a mean from a total of at most 53 bits, by one division', () => {
  /** Deterministic integers of every width up to 110 bits, both signs, with the edges of 2^53 and 2^99. */
  function totals(seed: number, count: number): bigint[] {
    let s = seed >>> 0;
    const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0), s / 2 ** 32);
    const out = [0n, 1n, -1n, 3n, 2n ** 52n, 2n ** 53n - 1n, -(2n ** 53n - 1n), 2n ** 53n, -(2n ** 53n), 2n ** 53n + 1n, 2n ** 60n - 1n, 2n ** 99n - 1n, -(2n ** 99n), 2n ** 99n + 1n, 2n ** 106n + 3n];
    const piece = () => BigInt(Math.floor(next() * 2 ** 30));
    while (out.length < count) {
      const bits = 1 + Math.floor(next() * 110);
      const t = (((piece() * 2n ** 30n + piece()) * 2n ** 30n + piece()) * 2n ** 30n + piece()) >> BigInt(120 - bits);
      out.push(next() < 0.5 ? -t : t);
    }
    return out;
  }
  const COUNTS = [1, 2, 3, 5, 6, 7, 10, 144, 1000, 65537, 2 ** 31 - 1, 2 ** 40 - 1, 2 ** 40 + 3, 2 ** 53 - 1];
  // The common lane's exponent, and the edges of the normal, subnormal and overflowing ranges.
  const EXPONENTS = [-68, -52, 0, 30, -1074, -1075, -1080, -1073, -1072, -1071, -1060, -1022, -1030, -1040, -1100, 960, 970, 1000, 1023, 1024];

  /** t as one integer, and (below 2^92 in magnitude) as the engine splits it: t >> 40 and its low 40 bits, two doubles. */
  const forms = (t: bigint, exponent: number): LaneTotal[] =>
    t < 2n ** 92n && t > -(2n ** 92n) ? [{ scaled: t, exponent }, { high: Number(t >> 40n), low: Number(t & (2n ** 40n - 1n)), exponent }] : [{ scaled: t, exponent }];

  it('equals roundRational, bit for bit, over random and edge totals, counts and exponents, as one integer or a pair of doubles', () => {
    let [compared, split] = [0, 0];
    for (const t of totals(27, 4000)) {
      for (const e of EXPONENTS) {
        for (const total of forms(t, e)) {
          if ('high' in total) split++;
          const sum = exactDouble(total);
          if (!Object.is(sum, roundRational(t, 1n, e))) expect({ t, e, total, sum }).toEqual({ t, e, total, sum: roundRational(t, 1n, e) });
          for (const n of COUNTS) {
            const got = meanOfTotal(total, n);
            const want = roundRational(t, BigInt(n), e);
            if (!Object.is(got, want)) expect({ t, n, e, total, got }).toEqual({ t, n, e, total, got: want });
            compared++;
          }
        }
      }
    }
    expect(split).toBeGreaterThan(3000 * EXPONENTS.length);
    expect(compared).toBe((4000 * EXPONENTS.length + split) * COUNTS.length);
  });

  it('equals roundRational on totals past 53 bits whose mean is a midpoint between two doubles, or a step either side of one', () => {
    let s = 7;
    const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0), s / 2 ** 32);
    let [compared, split] = [0, 0];
    for (let i = 0; i < 3000; i++) {
      // A quotient with 54 significant bits, the last one set: exactly halfway between two doubles (or a power of two: the step below is half the step above).
      const mantissa = i % 10 === 0 ? 2n ** 53n : (BigInt(Math.floor(next() * 2 ** 26)) * 2n ** 27n + BigInt(Math.floor(next() * 2 ** 27))) | (2n ** 53n) | 1n;
      const n = BigInt([1, 3, 7, 10, 60, 1000, 2 ** 20 + 1, 2 ** 40 - 1][i % 8]!);
      const shift = BigInt(Math.floor(next() * 40));
      for (const k of [-2n, -1n, 0n, 1n, 2n]) {
        for (const sign of [1n, -1n]) {
          const t = sign * ((mantissa * n) << shift) + k;
          const want = roundRational(t, n, -68);
          for (const total of forms(t, -68)) {
            const got = meanOfTotal(total, Number(n));
            if (!Object.is(got, want)) expect({ t, n, total, got }).toEqual({ t, n, total, got: want });
            if ('high' in total) split++;
            compared++;
          }
        }
      }
    }
    expect(split).toBeGreaterThan(5000);
    expect(compared).toBe(30000 + split);
    // Just below a power of two the step down is half the step up: totals n·2^(53+s) − j around that midpoint.
    for (let shift = 0n; shift < 24n; shift++) {
      for (const n of [2n, 3n, 5n, 7n, 10n, 1000n]) {
        for (let m = 0n; m <= 60n; m++) {
          for (const j of [(m * n << shift) / 20n - 1n, (m * n << shift) / 20n, (m * n << shift) / 20n + 1n]) {
            const t = (n << (53n + shift)) - j;
            const want = roundRational(t, n, -68);
            for (const total of forms(t, -68)) {
              const got = meanOfTotal(total, Number(n));
              if (!Object.is(got, want)) expect({ t, n, total, got }).toEqual({ t, n, total, got: want });
            }
          }
        }
      }
    }
  });

  it('equals roundRational at the edge of the normal range, where the quotient rounded twice may land on 2^−1022', () => {
    // The mean just below 2^−1022 rounds to the largest subnormal, not to 2^−1022 itself.
    expect(meanOfTotal({ scaled: 3n * 2n ** 51n - 1n, exponent: -1073 }, 3)).toBe(2.225073858507201e-308);
    let compared = 0;
    for (let e = -1073; e <= -1060; e++) {
      // Totals whose mean is about 2^−1022: count · 2^(52 − d) − k, scaled by 2^e, with d = e + 1074.
      const d = BigInt(e + 1074);
      for (const n of COUNTS.filter((c) => BigInt(c) * 2n ** (52n - d) <= 2n ** 53n)) {
        for (const k of [0n, 1n, 2n, 3n, BigInt(n) - 1n, BigInt(n), BigInt(n) + 1n, 2n * BigInt(n) - 1n]) {
          for (const t of [BigInt(n) * 2n ** (52n - d) - k, -(BigInt(n) * 2n ** (52n - d) - k)]) {
            const got = meanOfTotal({ scaled: t, exponent: e }, n);
            const want = roundRational(t, BigInt(n), e);
            if (!Object.is(got, want)) expect({ t, n, e, got }).toEqual({ t, n, e, got: want });
            compared++;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it('rounds a tie of the quotient to even, and gives subnormal and infinite means as roundRational does', () => {
    // 2^53 + 1 over 2: exactly between two doubles, rounded to the even one; a total past 53 bits takes the integer path.
    expect(meanOfTotal({ scaled: 2n ** 54n + 2n, exponent: 0 }, 4)).toBe(2 ** 52);
    expect(meanOfTotal({ scaled: 3n, exponent: -1075 }, 1)).toBe(roundRational(3n, 1n, -1075));
    expect(meanOfTotal({ scaled: 2n ** 52n, exponent: 1000 }, 1)).toBe(Infinity);
    expect(meanOfTotal({ scaled: -7n, exponent: -2000 }, 3)).toBe(roundRational(-7n, 3n, -2000));
  });
});

describe('numbers written as the data endpoints write them', () => {
  it('CSV and GeoJSON text of doubles equal DuckDB\'s numberText and jsonText', async () => {
    const xs = [...doubles(5, 6000), -0, 0, 1e15, 9999999999999998, 1e16, 0.0001, 0.00001];
    const c = await (await DuckDBInstance.create(':memory:')).connect();
    const list = xs.map((x) => (Object.is(x, -0) ? '-0.0::DOUBLE' : `${x.toExponential()}::DOUBLE`)).join(',');
    const rows = (await c.runAndReadAll(`SELECT x, ${numberText('x')}, ${jsonText(col('x', 'DOUBLE', true, ''), 'x')} FROM (SELECT unnest([${list}]) AS x)`)).getRows();
    c.closeSync();
    expect(rows).toHaveLength(xs.length);
    const mismatches = rows.filter(([x, csv, json]) => csvNumber(x as number) !== csv || jsonNumber(x as number) !== json);
    expect(mismatches).toEqual([]);
    expect([csvNumber(NaN), jsonNumber(Infinity)]).toEqual([null, 'null']);
  });
});
