import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import type { AggregateShape } from '../../../queries/sql/aggregate-shape.ts';
import { compileAggregate } from '../../../queries/sql/compile-aggregate.ts';
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
    expect(summed.sql).toContain('AS HUGEINT');
    expect(summed.sql).not.toMatch(/\bsum\(m0\)|\bavg\(/);
  });
});
