import { describe, expect, it } from 'vitest';
import { SplitMemo } from '../../../queries/aggregate/aggregate-split-memo.ts';

describe('the one-bucket split plan remembered per shape', () => {
  it('cuts a shape not seen, and one whose last rate fits; not one whose rate gives more groups than the merge holds', () => {
    const memo = new SplitMemo();
    expect(memo.splitWorthIt('unseen', 1_000_000, 20_000)).toBe(true);
    memo.rememberRate('dense', 0.5);
    expect(memo.splitWorthIt('dense', 1_000_000, 20_000)).toBe(false);
    // The same rate over fewer rows fits: cut.
    expect(memo.splitWorthIt('dense', 40_000, 20_000)).toBe(true);
    memo.rememberRate('sparse', 0.001);
    expect(memo.splitWorthIt('sparse', 1_000_000, 20_000)).toBe(true);
    // No more rows than the merge holds always fits, whatever the rate.
    memo.rememberRate('every-row', 1);
    expect(memo.splitWorthIt('every-row', 20_000, 20_000)).toBe(true);
    expect(memo.plans()).toEqual({ cut: 4, whole: 1, stopped: 0 });
  });

  it("watches a cut window's parts unless one of its shape's rates says it fits; a cut window's rate never plans one whole", () => {
    const memo = new SplitMemo();
    expect(memo.mayOverflow('never-run', 1_000, 20_000)).toBe(true);
    memo.rememberRate('merged', 0.001, 'merged');
    expect(memo.mayOverflow('merged', 1_000_000, 20_000)).toBe(false);
    expect(memo.mayOverflow('merged', 100_000_000, 20_000)).toBe(true);
    expect(memo.splitWorthIt('merged', 100_000_000, 20_000)).toBe(true);
    // Run whole at a rate that fits this window: not watched; then cut and merged at a higher one, the whole rate still plans.
    memo.rememberRate('both', 0.01);
    expect(memo.mayOverflow('both', 1_000_000, 20_000)).toBe(false);
    memo.rememberRate('both', 0.5, 'merged');
    expect([memo.mayOverflow('both', 1_000_000, 20_000), memo.splitWorthIt('both', 1_000_000, 20_000)]).toEqual([false, true]);
    expect([memo.mayOverflow('both', 4_000_000, 20_000), memo.splitWorthIt('both', 4_000_000, 20_000)]).toEqual([true, false]);
  });

  it('keeps a few hundred shapes, the least recently used forgotten first', () => {
    const memo = new SplitMemo();
    memo.rememberRate('kept', 1);
    for (let i = 0; i < 299; i++) memo.rememberRate(`filler-${i}`, 1);
    // Used again: now the most recent, so the next shape pushes out the oldest filler instead.
    expect(memo.splitWorthIt('kept', 1_000_000, 20_000)).toBe(false);
    memo.rememberRate('one-more', 1);
    expect(memo.splitWorthIt('kept', 1_000_000, 20_000)).toBe(false);
    for (let i = 0; i < 300; i++) memo.rememberRate(`later-${i}`, 1);
    expect(memo.splitWorthIt('kept', 1_000_000, 20_000)).toBe(true);
  });
});
