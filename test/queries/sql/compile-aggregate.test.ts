import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import type { AggregateShape } from '../../../queries/sql/aggregate-shape.ts';
import { aggregateColumns, compileAggregate } from '../../../queries/sql/compile-aggregate.ts';
import { chunkReader } from '../../../queries/stream/aggregate-rows.ts';
import { hotspot, tempDir } from '../../helpers/fixtures.ts';
import { exactMean, exactSum } from '../../helpers/exact.ts';
import { writeParquet } from '../../helpers/parquet.ts';
import { at, openFixtures, rows, spec } from './compile-fixtures.ts';

let instance: DuckDBInstance;
let c: DuckDBConnection;
let dataDir: string;
let files: string[];
beforeAll(async () => {
  const f = await openFixtures();
  ({ instance, c, dataDir } = f);
  files = f.files.hotspots!;
});
afterAll(() => instance.closeSync());

const shape = (over: Partial<AggregateShape> = {}): AggregateShape => ({ interval: 'all', keys: [], cellHundredths: null, stats: [{ name: 'count' }], ...over });
const window = { from: at('2025-08-01'), to: at('2025-08-03') };

describe('the aggregate compiler', () => {
  it('binds the window, the filter values and the `all` bucket; identifiers come from the descriptor', async () => {
    const value = "'; DROP TABLE t; --";
    const q = compileAggregate({ spec: spec(hotspots, dataDir, { filters: [{ kind: 'equals', column: 'country', value }] }), files, window, shape: shape({ keys: [hotspots.aggregate!.keys[0]!] }), limit: 10 });
    expect(q.sql).not.toContain('DROP');
    expect(q.params).toEqual([String(window.from), '2025-08-01T00:00:00Z', '2025-08-03T00:00:00Z', value]);
    expect(q.sql).toContain('t."country" AS k0');
    expect(await rows(c, q)).toEqual([]);
  });

  it('asks for at most `limit` groups, ordered by bucket then keys with nulls last', async () => {
    const q = compileAggregate({ spec: spec(hotspots, dataDir), files, window, shape: shape({ interval: 'day', keys: [hotspots.aggregate!.keys[0]!] }), limit: 1000 });
    expect(q.sql).toMatch(/ORDER BY g\.b, g\.k0 ASC NULLS LAST LIMIT 1000$/);
    const got = (await rows(c, q)).map((r) => [r[0], r[1]]);
    const sorted = [...got].sort((a, b) => (a[0] !== b[0] ? (a[0]! < b[0]! ? -1 : 1) : a[1] === b[1] ? 0 : a[1] === null ? 1 : b[1] === null ? -1 : a[1]! < b[1]! ? -1 : 1));
    expect(got.length).toBeGreaterThan(1);
    expect(got).toEqual(sorted);
    expect(compileAggregate({ spec: spec(hotspots, dataDir), files, window, shape: shape(), limit: 1 }).sql).toMatch(/LIMIT 1$/);
  });

  it('sums through integer limbs only when a sum or mean is asked', () => {
    const plain = compileAggregate({ spec: spec(hotspots, dataDir), files, window, shape: shape({ stats: [{ name: 'count' }, { name: 'frp.max', column: 'frp', fn: 'max' }] }), limit: 1 });
    expect(plain.sql).not.toContain('HUGEINT');
    const summed = compileAggregate({ spec: spec(hotspots, dataDir), files, window, shape: shape({ stats: [{ name: 'count' }, { name: 'frp.mean', column: 'frp', fn: 'mean' }] }), limit: 1 });
    expect(summed.sql).toContain('::HUGEINT');
    expect(summed.sql).not.toMatch(/\bsum\(m0\)|\bavg\(/);
  });
});

describe('exact sums across the lanes', () => {
  // Values on both sides of lane edges (2^-15, 2^17, 2^49), far outside them, subnormal, and cancelling.
  const VALUES = [2 ** -15, 2 ** -15 - 2 ** -68, 2 ** 17 - 2 ** -36, 2 ** 17, 2 ** 49 - 2 ** -3, -(2 ** 49), 0.1, -0.1, 7.3, -1e16, 1e16, 1e300, -1e300, 5e-324, 1e-310, -2.5e-300, 1e308, -12.5, 3.75];
  const s = shape({ stats: [{ name: 'count' }, { name: 'frp.sum', column: 'frp', fn: 'sum' }, { name: 'frp.mean', column: 'frp', fn: 'mean' }] });

  it('gives the correctly rounded sum and mean of values in every lane, whichever lanes a group holds', async () => {
    const dir = await tempDir();
    // The whole set, each set that leaves one value out, and sets only outside and only inside the common lane.
    const sets = [VALUES, ...VALUES.map((_, skip) => VALUES.filter((_, i) => i !== skip)), [1e16, -2.5e-300, 2 ** 17, 1e300], [0.1, 0.2, 0.3, -7.3]];
    for (const [n, xs] of sets.entries()) {
      const file = path.join(dir, `hotspots/date=2025-08-01/s${n}.parquet`);
      await writeParquet(file, hotspots, xs.map((frp, i) => hotspot(`s${n}-${i}`, '2025-08-01T10:00:00Z', { frp })));
      const query = { spec: spec(hotspots, dir), files: [file], window, shape: s, limit: 10 };
      const q = compileAggregate(query);
      const result = await c.run(q.sql, q.params);
      const [group] = chunkReader(result.columnNames(), s, aggregateColumns(query))(result.getChunk(0));
      expect(group!.values.slice(1)).toEqual([xs.length, exactSum(xs), exactMean(xs)]);
    }
  });
});
