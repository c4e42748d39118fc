import { describe, expect, it } from 'vitest';
import type { Sources } from '../../../queries/sources/preflight.ts';
import { formatInstant, parseInstant } from '../../../queries/instant.ts';
import { rowSlices, rowsIn, sliceCount } from '../../../queries/sources/slices.ts';
import { bucketSlices } from '../../../queries/aggregate/aggregate-slices.ts';

const at = (text: string) => parseInstant(text)!;
const DAY = 86_400_000_000n;

/** Day partitions from `first`, one file each holding `rows[i]` rows (undefined: not known). */
function sources(first: string, rows: (number | undefined)[]): Sources {
  const partitions = rows.map((_, i) => {
    const start = at(first) + BigInt(i) * DAY;
    return { key: formatInstant(start).slice(0, 10), start, end: start + DAY, files: [{ path: `/d/${i}.parquet`, size: 1, mtimeMs: 1 }] };
  });
  const rowsByFile = new Map(rows.flatMap((n, i) => (n === undefined ? [] : [[`/d/${i}.parquet`, n] as const])));
  const fileRows = rows.every((n) => n !== undefined) ? rows.reduce((a, n) => a! + n!, 0) : null;
  return { partitions, rowsByFile, fileRows } as unknown as Sources;
}

const text = (ws: { from: bigint; to: bigint }[]) => ws.map((w) => `${formatInstant(w.from)}/${formatInstant(w.to)}`);

describe('a window cut into slices of about equal rows', () => {
  it('cuts where the rows balance, not in the middle of the time', () => {
    // Nine quiet days and a busy tenth: half the rows lie before the tenth day.
    const s = sources('2025-06-01', [1, 1, 1, 1, 1, 1, 1, 1, 1, 9]);
    const w = { from: at('2025-06-01'), to: at('2025-06-11') };
    expect(text(rowSlices(w, s, 2))).toEqual(['2025-06-01T00:00:00Z/2025-06-10T00:00:00Z', '2025-06-10T00:00:00Z/2025-06-11T00:00:00Z']);
    // Thirds: 6 rows by the sixth day's end, 12 rows half way through the busy day.
    expect(text(rowSlices(w, s, 3))).toEqual([
      '2025-06-01T00:00:00Z/2025-06-07T00:00:00Z',
      '2025-06-07T00:00:00Z/2025-06-10T08:00:00Z',
      '2025-06-10T08:00:00Z/2025-06-11T00:00:00Z',
    ]);
  });

  it('counts only the part of a partition inside the window, and only where partitions are', () => {
    const s = sources('2025-06-01', [4, 4]);
    const w = { from: at('2025-05-01'), to: at('2025-06-02T12:00:00Z') };
    // 4 rows on day one and 2 in the half of day two inside the window: 3 each side of 18:00 on day one.
    expect(text(rowSlices(w, s, 2))).toEqual(['2025-06-01T00:00:00Z/2025-06-01T18:00:00Z', '2025-06-01T18:00:00Z/2025-06-02T12:00:00Z']);
  });

  it('falls back to equal durations when a file has no known count, or no rows', () => {
    const w = { from: at('2025-06-01'), to: at('2025-06-05') };
    const halves = ['2025-06-01T00:00:00Z/2025-06-03T00:00:00Z', '2025-06-03T00:00:00Z/2025-06-05T00:00:00Z'];
    expect(text(rowSlices(w, sources('2025-06-01', [1, 1, 1, undefined]), 2))).toEqual(halves);
    expect(text(rowSlices(w, sources('2025-06-01', [0, 0, 0, 0]), 2))).toEqual(halves);
  });

  it('gives n slices covering the window once, in order, even with many more slices than rows', () => {
    const s = sources('2025-06-01', [0, 1, 0, 0]);
    const w = { from: at('2025-06-01'), to: at('2025-06-05') };
    const slices = rowSlices(w, s, 5);
    expect(slices).toHaveLength(5);
    expect(slices[0]!.from).toBe(w.from);
    expect(slices.at(-1)!.to).toBe(w.to);
    slices.slice(1).forEach((x, i) => expect(x.from).toBe(slices[i]!.to));
    slices.forEach((x) => expect(x.to >= x.from).toBe(true));
  });

  it('gives an aggregate parts of about equal rows, cut on bucket starts', () => {
    const s = sources('2025-06-01', [1, 1, 1, 1, 1, 1, 1, 1, 1, 9]);
    const w = { from: at('2025-06-01'), to: at('2025-06-11') };
    expect(text(bucketSlices(w, s, 3, 'day'))).toEqual([
      '2025-06-01T00:00:00Z/2025-06-07T00:00:00Z',
      '2025-06-07T00:00:00Z/2025-06-10T00:00:00Z',
      '2025-06-10T00:00:00Z/2025-06-11T00:00:00Z',
    ]);
  });

  it('counts a window\'s rows by its own partitions, so a quiet stretch of a busy year is not split', () => {
    const s = sources('2025-06-01', [10, 10, 10, 30_000]);
    const quiet = { from: at('2025-06-01'), to: at('2025-06-04') };
    expect(rowsIn(s, quiet)).toBe(30);
    expect(rowsIn(s, { from: at('2025-06-04T12:00:00Z'), to: at('2025-06-05') })).toBe(15_000);
    expect(sliceCount(quiet, s, 4)).toBe(1);
    expect(sliceCount({ from: at('2025-06-01'), to: at('2025-06-05') }, s, 4)).toBe(4);
    // A count not known: the listed rows spread over all partitions (none known here: 0).
    expect(rowsIn(sources('2025-06-01', [10, undefined]), quiet)).toBe(0);
  });
});
