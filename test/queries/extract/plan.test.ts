import { describe, expect, it } from 'vitest';
import { DATASETS } from '../../../datasets/index.ts';
import { groupFiles } from '../../../queries/extract/plan.ts';
import type { Partition } from '../../../queries/files/partitions.ts';

const day = (n: number, files: string[]): Partition => ({
  key: `2025-07-0${n}`,
  start: BigInt(n) * 86_400_000_000n,
  end: BigInt(n + 1) * 86_400_000_000n,
  files: files.map((f) => ({ path: f, size: 1, mtimeMs: 1 })),
});

describe('groupFiles', () => {
  const parts = [day(1, ['a']), day(2, ['b']), day(3, ['c']), day(4, ['d1', 'd2']), day(5, ['e'])];
  const counts = [10, 10, 10, 10, 10];

  it('puts the first partition alone, then about groupRows rows per group, skipping empty and cut-off partitions', () => {
    const groups = groupFiles({ partitions: parts, counts: [10, 0, 10, 10, 10], cutTo: 4n * 86_400_000_000n + 1n, groupRows: 20, sortedFiles: new Set() });
    expect(groups.map((g) => g.files)).toEqual([['a'], ['c', 'd1', 'd2']]);
    expect(groupFiles({ partitions: parts, counts, cutTo: null, groupRows: 20, sortedFiles: new Set() }).map((g) => g.files)).toEqual([['a'], ['b', 'c'], ['d1', 'd2', 'e']]);
  });

  it('marks a group presorted only when each of its partitions is one file stored in order', () => {
    const sorted = new Set(['a', 'b', 'c', 'd1', 'd2', 'e']);
    expect(groupFiles({ partitions: parts, counts, cutTo: null, groupRows: 20, sortedFiles: sorted }).map((g) => g.presorted)).toEqual([true, true, false]);
    expect(groupFiles({ partitions: parts, counts, cutTo: null, groupRows: 20, sortedFiles: new Set(['a', 'c']) }).map((g) => g.presorted)).toEqual([true, false, false]);
    expect(groupFiles({ partitions: parts, counts, cutTo: null, groupRows: 10, sortedFiles: sorted }).map((g) => g.presorted)).toEqual([true, true, true, false, true]);
  });
});

describe('descriptors', () => {
  it('order every timed dataset by its time column first (partitions, groups and time slices are consecutive in order)', () => {
    for (const d of DATASETS.filter((x) => x.time)) expect([d.name, d.orderBy[0]]).toEqual([d.name, d.time!.column]);
  });
});
