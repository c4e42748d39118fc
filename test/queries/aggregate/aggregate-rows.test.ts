import { describe, expect, it } from 'vitest';
import type { AggregateShape } from '../../../queries/aggregate/aggregate-shape.ts';
import { readAggregateRow } from '../../../queries/aggregate/aggregate-rows.ts';

describe('readAggregateRow', () => {
  // Every format writes a non-finite number as null and -0 as 0; a cached answer (kept as JSON) can
  // hold nothing else, so a fresh answer must not either, or Arrow would change under one ETag.
  it('gives a minimum or maximum that is not finite as null, and -0 as 0', () => {
    const shape: AggregateShape = { interval: 'all', keys: [], cellHundredths: null, stats: [{ name: 'count' }, { name: 'frp.max', column: 'frp', fn: 'max' }, { name: 'frp.min', column: 'frp', fn: 'min' }] } as AggregateShape;
    const read = (max: number, min: number) => {
      const row = (name: string) => ({ b: 0n, n: 3n, s1: max, s2: min })[name];
      return readAggregateRow(row, shape, { keys: [], summed: [], stations: false }).values.slice(1);
    };
    expect(read(Infinity, -Infinity)).toEqual([3, null, null]);
    expect(read(NaN, 2.5)).toEqual([3, null, 2.5]);
    const [, max, min] = read(-0, -0);
    expect([Object.is(max, 0), Object.is(min, 0)]).toEqual([true, true]);
  });
});
