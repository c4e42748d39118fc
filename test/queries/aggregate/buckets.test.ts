import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketSql } from '../../../queries/aggregate/aggregate-keys.ts';
import { addToRuns, bucketFloor, bucketRuns, calendarStarts, type BucketRun } from '../../../queries/aggregate/buckets.ts';
import { formatInstant } from '../../../queries/instant.ts';
import { ALL_TIME } from '../../../queries/window.ts';
import { at, openDuck } from '../sql/compile-fixtures.ts';

// The flooring and calendar-start cases were in aggregate-slices.test.ts and aggregate-keys.test.ts
// before both modules took bucket time from buckets.ts.
describe('bucket time', () => {
  it('floors to the UTC hour, day, ISO Monday, month and year, before 1970 too', () => {
    const t = at('2024-03-06T13:45:12.5Z');
    expect(['hour', 'day', 'week', 'month', 'year'].map((i) => formatInstant(bucketFloor(t, i as 'hour')))).toEqual([
      '2024-03-06T13:00:00Z', '2024-03-06T00:00:00Z', '2024-03-04T00:00:00Z', '2024-03-01T00:00:00Z', '2024-01-01T00:00:00Z',
    ]);
    expect(formatInstant(bucketFloor(at('1969-12-31T23:59:59.999999Z'), 'week'))).toBe('1969-12-29T00:00:00Z');
    expect(formatInstant(bucketFloor(at('0050-07-04T00:00:00Z'), 'year'))).toBe('0050-01-01T00:00:00Z');
  });

  it('lists the calendar starts that meet the window, the first at or before it, and none for windows of too many or beyond a calendar', () => {
    expect(calendarStarts({ from: at('2024-02-29T12:00:00Z'), to: at('2024-04-01') }, 'month')).toEqual([at('2024-02-01'), at('2024-03-01')]);
    expect(calendarStarts({ from: at('0099-12-31T23:59:59.999999Z'), to: at('0100-01-01T00:00:00.000001Z') }, 'year')).toEqual([at('0099-01-01'), at('0100-01-01')]);
    expect(calendarStarts({ from: at('2000-01-01'), to: at('2256-01-01') }, 'year')).toHaveLength(256);
    expect(calendarStarts({ from: at('2000-01-01'), to: at('2256-01-01T00:00:00.000001Z') }, 'year')).toBeNull();
    expect(calendarStarts(ALL_TIME, 'year')).toBeNull();
  });
});

describe('the statement buckets rows where the parts are cut', () => {
  let instance: DuckDBInstance;
  let c: DuckDBConnection;
  beforeAll(async () => ({ instance, c } = await openDuck()));
  afterAll(() => {
    c.closeSync();
    instance.closeSync();
  });

  it.each(['hour', 'day', 'week', 'month', 'year'] as const)('every %s bucket DuckDB computes for a row starts where bucketFloor says', async (interval) => {
    const w = { from: at('1968-12-30T05:00:00Z'), to: at('2025-03-01T00:00:00Z') };
    // Instants on and either side of bucket starts, across years, leap days and the epoch.
    const instants = ['1968-12-31T23:59:59.999999Z', '1969-12-29T00:00:00Z', '1970-01-01T00:00:00Z', '1970-01-04T23:59:59.999999Z', '1970-01-05T00:00:00Z',
      '2000-02-29T12:00:00Z', '2024-02-29T23:59:59.999999Z', '2024-03-01T00:00:00Z', '2024-12-30T00:00:00.000001Z', '2025-02-28T23:00:00Z'].map(at);
    const params: string[] = [];
    const bind = (v: string) => {
      params.push(v);
      return `$${params.length}`;
    };
    const b = bucketSql(interval, 't', bind, w);
    const start = b.start ? b.start('k') : 'k';
    const sql = `SELECT epoch_us(t) AS at, CAST(${start} AS BIGINT) AS s FROM (SELECT ${b.key} AS k, t FROM (SELECT make_timestamp(unnest([${instants.join(', ')}]::BIGINT[])) AS t))`;
    const rows = (await c.runAndReadAll(sql, params)).getRowObjects();
    expect(rows.map((r) => formatInstant(r.s as bigint))).toEqual(rows.map((r) => formatInstant(bucketFloor(r.at as bigint, interval))));
    expect(new Set(rows.map((r) => r.s)).size).toBeGreaterThan(3);
  });
});

describe('runs of groups per bucket', () => {
  it('joins a bucket\'s groups one after another, and its runs in adjacent parts', () => {
    expect([...bucketRuns([1n, 1n, 2n, 3n, 3n, 3n])]).toEqual([[1n, 2], [2n, 1], [3n, 3]]);
    expect([...bucketRuns([[1n, 2], [2n, 1], [2n, 4], [3n, 1]] as const)]).toEqual([[1n, 2], [2n, 5], [3n, 1]]);
    expect([...bucketRuns([])]).toEqual([]);
    const runs: BucketRun[] = [];
    for (const b of [5n, 5n, 6n, 5n]) addToRuns(runs, b);
    addToRuns(runs, 5n, 3);
    expect(runs).toEqual([[5n, 2], [6n, 1], [5n, 4]]);
  });
});
