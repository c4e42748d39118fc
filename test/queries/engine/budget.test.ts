import { describe, expect, it } from 'vitest';
import { EngineBudget } from '../../../queries/engine/budget.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('EngineBudget', () => {
  it('counts only the time the engine works: a long pause between two short runs spends nothing', async () => {
    let spent = 0;
    const budget = new EngineBudget(300, () => spent++);
    const first = budget.run();
    await sleep(100);
    first();
    await sleep(600);
    const second = budget.run();
    await sleep(100);
    second();
    expect([spent, budget.spent]).toEqual([0, false]);
    budget.close();
  });

  it('is spent, once, when the runs add up to the limit, nested runs counting once', async () => {
    let spent = 0;
    const budget = new EngineBudget(200, () => spent++);
    const outer = budget.run();
    const inner = budget.run();
    await sleep(120);
    inner();
    outer();
    const again = budget.run();
    await sleep(250);
    again();
    expect([spent, budget.spent]).toEqual([1, true]);
  });
});
