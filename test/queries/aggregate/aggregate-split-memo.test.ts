import { describe, expect, it } from 'vitest';
import { mayOverflow, rememberRate, splitPlans, splitWorthIt } from '../../../queries/aggregate/aggregate-split-memo.ts';

describe('the one-bucket split plan remembered per shape', () => {
  it('cuts a shape not seen, and one whose last rate fits; not one whose rate gives more groups than the merge holds', () => {
    const before = splitPlans();
    expect(splitWorthIt('unseen', 1_000_000, 20_000)).toBe(true);
    rememberRate('dense', 0.5);
    expect(splitWorthIt('dense', 1_000_000, 20_000)).toBe(false);
    // The same rate over fewer rows fits: cut.
    expect(splitWorthIt('dense', 40_000, 20_000)).toBe(true);
    rememberRate('sparse', 0.001);
    expect(splitWorthIt('sparse', 1_000_000, 20_000)).toBe(true);
    // No more rows than the merge holds always fits, whatever the rate.
    rememberRate('every-row', 1);
    expect(splitWorthIt('every-row', 20_000, 20_000)).toBe(true);
    const after = splitPlans();
    expect([after.cut - before.cut, after.whole - before.whole]).toEqual([4, 1]);
  });

  it("watches a cut window's parts unless one of its shape's rates says it fits; a cut window's rate never plans one whole", () => {
    expect(mayOverflow('never-run', 1_000, 20_000)).toBe(true);
    rememberRate('merged', 0.001, 'merged');
    expect(mayOverflow('merged', 1_000_000, 20_000)).toBe(false);
    expect(mayOverflow('merged', 100_000_000, 20_000)).toBe(true);
    expect(splitWorthIt('merged', 100_000_000, 20_000)).toBe(true);
    // Run whole at a rate that fits this window: not watched; then cut and merged at a higher one, the whole rate still plans.
    rememberRate('both', 0.01);
    expect(mayOverflow('both', 1_000_000, 20_000)).toBe(false);
    rememberRate('both', 0.5, 'merged');
    expect([mayOverflow('both', 1_000_000, 20_000), splitWorthIt('both', 1_000_000, 20_000)]).toEqual([false, true]);
    expect([mayOverflow('both', 4_000_000, 20_000), splitWorthIt('both', 4_000_000, 20_000)]).toEqual([true, false]);
  });

  it('keeps a few hundred shapes, the least recently used forgotten first', () => {
    rememberRate('kept', 1);
    for (let i = 0; i < 299; i++) rememberRate(`filler-${i}`, 1);
    // Used again: now the most recent, so the next shape pushes out the oldest filler instead.
    expect(splitWorthIt('kept', 1_000_000, 20_000)).toBe(false);
    rememberRate('one-more', 1);
    expect(splitWorthIt('kept', 1_000_000, 20_000)).toBe(false);
    for (let i = 0; i < 300; i++) rememberRate(`later-${i}`, 1);
    expect(splitWorthIt('kept', 1_000_000, 20_000)).toBe(true);
  });
});
