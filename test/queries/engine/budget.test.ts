import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EngineBudget } from '../../../queries/engine/budget.ts';

// The budget is timers and performance.now(): fake ones make its arithmetic exact on any machine.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});
const pass = (ms: number) => vi.advanceTimersByTime(ms);

describe('EngineBudget', () => {
  it('counts only the time the engine works: a long pause between two short runs spends nothing', () => {
    let spent = 0;
    const budget = new EngineBudget(300, () => spent++);
    const first = budget.run();
    pass(100);
    first();
    pass(600);
    const second = budget.run();
    pass(199);
    second();
    expect([spent, budget.spent]).toEqual([0, false]);
    budget.close();
  });

  it('is spent, once, when the runs add up to the limit, nested runs counting once', () => {
    let spent = 0;
    const budget = new EngineBudget(200, () => spent++);
    const outer = budget.run();
    const inner = budget.run();
    pass(120);
    inner();
    outer();
    const again = budget.run();
    pass(79);
    expect([spent, budget.spent]).toEqual([0, false]);
    pass(1);
    expect([spent, budget.spent]).toEqual([1, true]);
    pass(500);
    again();
    expect(spent).toBe(1);
  });
});
