import { describe, expect, it } from 'vitest';
import type { Sources } from '../../../queries/sources/preflight.ts';
import { formatInstant, parseInstant } from '../../../queries/instant.ts';
import { bucketSlices, filesIn, mergedSlices, probedQueues } from '../../../queries/aggregate/aggregate-slices.ts';

const at = (text: string) => parseInstant(text)!;
const DAY = 86_400_000_000n;

/** Day partitions from `first`, one file each. */
function sources(first: string, days: number): Sources {
  const partitions = Array.from({ length: days }, (_, i) => {
    const start = at(first) + BigInt(i) * DAY;
    return { key: formatInstant(start).slice(0, 10), start, end: start + DAY, files: [{ path: `/d/${i}.parquet`, size: 1, mtimeMs: 1 }] };
  });
  return { partitions, rowsByFile: new Map() } as unknown as Sources;
}

const text = (ws: { from: bigint; to: bigint }[]) => ws.map((w) => `${formatInstant(w.from)}/${formatInstant(w.to)}`);

describe('a window in bucket-aligned parts', () => {
  // Flooring is tested in buckets.test.ts.
  it('cuts only on bucket starts, covering the window once, in order', () => {
    const w = { from: at('2024-02-10T06:00:00Z'), to: at('2024-04-20T00:00:00Z') };
    const s = sources('2024-02-10', 70);
    // Thirds of the window end on 4 and 27 March: both floor to 1 March, one cut.
    expect(text(bucketSlices(w, s, 3, 'month'))).toEqual(['2024-02-10T06:00:00Z/2024-03-01T00:00:00Z', '2024-03-01T00:00:00Z/2024-04-20T00:00:00Z']);
    const days = bucketSlices(w, s, 4, 'day');
    expect(days).toHaveLength(4);
    expect(days[0]!.from).toBe(w.from);
    expect(days.at(-1)!.to).toBe(w.to);
    days.slice(1).forEach((d, i) => expect([d.from, d.from % DAY]).toEqual([days[i]!.to, 0n]));
  });

  it('one part for `all`, one connection, or buckets wider than the window', () => {
    const w = { from: at('2024-03-05'), to: at('2024-03-08') };
    const s = sources('2024-03-05', 3);
    expect(bucketSlices(w, s, 4, 'all')).toEqual([w]);
    expect(bucketSlices(w, s, 1, 'day')).toEqual([w]);
    expect(bucketSlices(w, s, 4, 'week')).toEqual([w]);
    expect(filesIn(s, { from: at('2024-03-06'), to: at('2024-03-07') })).toEqual(['/d/1.parquet']);
  });
});

/** Day partitions from `first` with these rows each (footer counts). */
function counted(first: string, rows: number[]): Sources {
  const s = sources(first, rows.length);
  return { ...s, rowsByFile: new Map(rows.map((n, i) => [`/d/${i}.parquet`, n])) } as Sources;
}

describe('a window of fewer buckets than parts, cut inside them', () => {
  it('cuts `all` and a year over a year into parts of about equal rows, inside days, covering the window once', () => {
    const w = { from: at('2025-01-01T06:00:00Z'), to: at('2025-01-05') };
    // The first day holds three times the rows of each other: its own part and a half.
    const s = counted('2025-01-01', [30_000, 10_000, 10_000, 10_000]);
    expect(bucketSlices(w, s, 3, 'all')).toHaveLength(1);
    const parts = mergedSlices(w, s, 3, 'all')!;
    expect(parts).toHaveLength(3);
    expect([parts[0]!.from, parts.at(-1)!.to]).toEqual([w.from, w.to]);
    parts.slice(1).forEach((p, i) => expect(p.from).toBe(parts[i]!.to));
    // The window's 52,500 rows (a quarter of the first day's are before 06:00) in thirds of 17,500.
    expect(text(parts)).toEqual(['2025-01-01T06:00:00Z/2025-01-01T20:00:00Z', '2025-01-01T20:00:00Z/2025-01-03T06:00:00Z', '2025-01-03T06:00:00Z/2025-01-05T00:00:00Z']);
    expect(parts.some((p) => p.from % DAY !== 0n)).toBe(true);
    const year = { from: at('2025-01-01'), to: at('2025-01-05') };
    expect(mergedSlices(year, s, 2, 'year')).toHaveLength(2);
    expect(mergedSlices(year, s, 2, 'month')).toHaveLength(2);
  });

  it('none when the buckets are as many as the parts, or one connection', () => {
    const w = { from: at('2025-01-01'), to: at('2025-01-05') };
    const s = counted('2025-01-01', [10_000, 10_000, 10_000, 10_000]);
    expect(mergedSlices(w, s, 4, 'day')).toBeNull();
    expect(mergedSlices(w, s, 1, 'all')).toBeNull();
    // Two weeks (Saturday to Tuesday) for four parts: two bucket-aligned, four cut anywhere.
    const weeks = { from: at('2025-01-04'), to: at('2025-01-07') };
    const three = counted('2025-01-04', [10_000, 10_000, 10_000]);
    expect(text(bucketSlices(weeks, three, 4, 'week'))).toEqual(['2025-01-04T00:00:00Z/2025-01-06T00:00:00Z', '2025-01-06T00:00:00Z/2025-01-07T00:00:00Z']);
    expect(text(mergedSlices(weeks, three, 4, 'week')!)).toEqual(['2025-01-04T00:00:00Z/2025-01-04T18:00:00Z', '2025-01-04T18:00:00Z/2025-01-05T12:00:00Z', '2025-01-05T12:00:00Z/2025-01-06T06:00:00Z', '2025-01-06T06:00:00Z/2025-01-07T00:00:00Z']);
  });
});

describe('parts cut inside a bucket, with a first piece alone first', () => {
  it("runs the first part's first rows (in sixteenths of it, at least as many as asked) before the rest of it, the other parts as they were", () => {
    const w = { from: at('2025-01-01'), to: at('2025-01-05') };
    const s = counted('2025-01-01', [16_000, 16_000, 16_000, 16_000]);
    const parts = mergedSlices(w, s, 2, 'all')!;
    // The first part's 32,000 rows: 4,000 are two sixteenths (6 hours of the first day), 5,000 three.
    expect(probedQueues(parts, s, 4_000).map(text)).toEqual([['2025-01-01T00:00:00Z/2025-01-01T06:00:00Z', '2025-01-01T06:00:00Z/2025-01-03T00:00:00Z'], ['2025-01-03T00:00:00Z/2025-01-05T00:00:00Z']]);
    expect(text(probedQueues(parts, s, 5_000)[0]!)).toEqual(['2025-01-01T00:00:00Z/2025-01-01T09:00:00Z', '2025-01-01T09:00:00Z/2025-01-03T00:00:00Z']);
    // Nothing left of the first part after its first piece (fifteen sixteenths at most): the parts alone.
    expect(probedQueues(parts, s, 32_000)).toEqual(parts.map((p) => [p]));
    expect(probedQueues(parts, s, 31_000)).toEqual(parts.map((p) => [p]));
    expect(probedQueues(parts, s, 29_000)[0]).toHaveLength(2);
  });
});
