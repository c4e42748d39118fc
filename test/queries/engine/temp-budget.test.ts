import { serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { TempBudgetFullError } from '../../../queries/errors.ts';
import { TempBudget } from '../../../queries/engine/temp-budget.ts';

describe('TempBudget', () => {
  it('refuses a reservation beyond the budget, and takes it once enough is released', () => {
    const budget = new TempBudget(100, 60);
    const a = budget.reserve(60);
    expect(() => budget.reserve(50)).toThrow(TempBudgetFullError);
    a.shrinkTo(40);
    expect(budget.usedBytes).toBe(40);
    const b = budget.reserve(50);
    a.release();
    a.release();
    b.release();
    expect(budget.usedBytes).toBe(0);
  });

  it('a reservation grows within the budget and keeps what it held when growing is refused', () => {
    const budget = new TempBudget(100, 60);
    const other = budget.reserve(30);
    const growing = budget.reserve(0);
    growing.growTo(50);
    growing.growTo(20);
    expect([growing.bytes, budget.usedBytes]).toEqual([50, 80]);
    expect(() => growing.growTo(80)).toThrow(TempBudgetFullError);
    expect([growing.bytes, budget.usedBytes]).toEqual([50, 80]);
    other.release();
    growing.growTo(70);
    growing.release();
    expect(budget.usedBytes).toBe(0);
  });

  it('says when to retry from how fast reservations were released, not a fixed figure', () => {
    const budget = new TempBudget(100, 60);
    const retryOf = (bytes: number): number => {
      try {
        budget.reserve(bytes);
      } catch (e) {
        if (e instanceof TempBudgetFullError) return e.retryAfterSeconds;
      }
      throw new Error('the reservation was not refused');
    };
    // Nothing released yet: the configured figure.
    const held = budget.reserve(100);
    expect(retryOf(10)).toBe(60);
    held.release();
    // 100 bytes released in the last 30 s: about 3.3 bytes/s, so 50 missing bytes are about 15 s away.
    budget.reserve(100);
    expect(retryOf(50)).toBe(15);
  });

  it('lends room beyond a reservation only while at most half the budget is in use, and takes back what is no longer asked for', () => {
    const budget = new TempBudget(100, 60);
    const first = budget.reserve(20);
    expect(budget.resize(first, 40)).toBe(true);
    expect(first.bytes).toBe(40);
    const second = budget.reserve(20);
    // 60 of 100 in use: nothing more is lent, to anyone, and what is held is kept.
    expect(budget.resize(first, 45)).toBe(false);
    expect(budget.resize(second, 21)).toBe(false);
    expect([first.bytes, second.bytes, budget.usedBytes]).toEqual([40, 20, 60]);
    // Asking for less gives the rest back at once.
    expect(budget.resize(first, 25)).toBe(true);
    expect([first.bytes, budget.usedBytes]).toEqual([25, 45]);
    expect(budget.resize(second, 25)).toBe(true);
    expect(budget.usedBytes).toBe(50);
    // A response that arrives now still gets its own reservation.
    expect(() => budget.reserve(50)).not.toThrow();
  });

  it('keeps what it learns of released room in constant memory: a server that is never refused does not grow', () => {
    const budget = new TempBudget(100, 60);
    const cycle = (n: number) => {
      for (let i = 0; i < n; i++) budget.reserve(10).release();
    };
    cycle(100);
    const small = serialize(budget).length;
    cycle(100_000);
    // Everything the budget holds, private fields included: the same after 100,100 releases as after 100.
    expect(serialize(budget).length).toBeLessThanOrEqual(small + 64);
  });
});
