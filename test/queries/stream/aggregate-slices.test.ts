import { describe, expect, it } from 'vitest';
import type { Sources } from '../../../queries/files/preflight.ts';
import { formatInstant, parseInstant } from '../../../queries/instant.ts';
import { bucketFloor, bucketSlices, filesIn } from '../../../queries/stream/aggregate-slices.ts';

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
  it('floors to the UTC hour, day, ISO Monday, month and year, before 1970 too', () => {
    const t = at('2024-03-06T13:45:12.5Z');
    expect(['hour', 'day', 'week', 'month', 'year'].map((i) => formatInstant(bucketFloor(t, i as 'hour')))).toEqual([
      '2024-03-06T13:00:00Z', '2024-03-06T00:00:00Z', '2024-03-04T00:00:00Z', '2024-03-01T00:00:00Z', '2024-01-01T00:00:00Z',
    ]);
    expect(formatInstant(bucketFloor(at('1969-12-31T23:59:59.999999Z'), 'week'))).toBe('1969-12-29T00:00:00Z');
    expect(formatInstant(bucketFloor(at('0050-07-04T00:00:00Z'), 'year'))).toBe('0050-01-01T00:00:00Z');
  });

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
