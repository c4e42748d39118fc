import { describe, expect, it } from 'vitest';
import { spelled } from '../../../queries/encode/number-text.ts';

/** Doubles of every magnitude, with edges: a deterministic walk, so a failure repeats. */
function doubles(): number[] {
  const out = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 123e-20, 5e-324, Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 53, 2 ** 53 + 2, 1e15, 999999999999999.9];
  let seed = 0x2545f491;
  for (let i = 0; i < 20_000; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    const mantissa = seed / 2 ** 32 - 0.5;
    out.push(mantissa * 10 ** ((i % 640) - 320), Math.round(mantissa * 1e6));
  }
  return out;
}

describe('spelled', () => {
  it("is String's spelling of every finite double", () => {
    const differ = doubles().filter((x) => Number.isFinite(x) && spelled(x) !== String(x));
    expect(differ).toEqual([]);
  });
});
