import { describe, expect, it } from 'vitest';
import type { AggregateShape } from '../../../queries/aggregate/aggregate-shape.ts';
import { chunkReader } from '../../../queries/aggregate/aggregate-rows.ts';
import { openDuck } from '../sql/compile-fixtures.ts';

describe('a result chunk read as groups', () => {
  // Every format writes a non-finite number as null and -0 as 0; a cached answer (kept as JSON) can
  // hold nothing else, so a fresh answer must not either, or Arrow would change under one ETag.
  it('gives a minimum or maximum that is not finite as null, and -0 as 0', async () => {
    const shape: AggregateShape = { interval: 'all', keys: [], cellHundredths: null, stats: [{ name: 'count' }, { name: 'frp.max', column: 'frp', fn: 'max' }, { name: 'frp.min', column: 'frp', fn: 'min' }] } as AggregateShape;
    const { instance, c } = await openDuck();
    try {
      // The columns a statement of compileAggregate gives for this shape: bucket, count, then each stat.
      const result = await c.run(
        `SELECT 0::BIGINT AS b, 3::DOUBLE AS n, s1::DOUBLE AS s1, s2::DOUBLE AS s2 FROM (VALUES ('inf', '-inf'), ('nan', '2.5'), ('-0.0', '-0.0')) v(s1, s2)`,
      );
      const rows = chunkReader(result.columnNames(), shape, { keys: [], summed: [], stations: false })(result.getChunk(0)).map((g) => g.values.slice(1));
      expect(rows.slice(0, 2)).toEqual([[3, null, null], [3, null, 2.5]]);
      const [, max, min] = rows[2]!;
      expect([Object.is(max, 0), Object.is(min, 0)]).toEqual([true, true]);
    } finally {
      c.closeSync();
      instance.closeSync();
    }
  });
});
