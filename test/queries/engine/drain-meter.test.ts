import { describe, expect, it } from 'vitest';
import { DrainMeter } from '../../../queries/engine/drain-meter.ts';

const T0 = 1_700_000_000_000;

describe('DrainMeter: how fast requests are handed a connection', () => {
  it('knows no pace before anything was handed out', () => {
    expect(new DrainMeter().secondsToDrain(5, T0)).toBeNull();
  });

  it('20 hand-outs over 2 s is 10/s: 30 waiting drain in 3 s, 1 waiting in at least 1 s', () => {
    const m = new DrainMeter();
    for (let i = 0; i < 20; i++) m.record(T0 + i * 100);
    expect(m.perSecond(T0 + 2000)).toBeCloseTo(10, 5);
    expect(m.secondsToDrain(30, T0 + 2000)).toBe(3);
    expect(m.secondsToDrain(1, T0 + 2000)).toBe(1);
  });

  it('a slow pace gives a long wait, rounded up to whole seconds', () => {
    const m = new DrainMeter();
    m.record(T0);
    m.record(T0 + 3000);
    // 2 hand-outs over 4 s: 0.5/s, so 3 waiting need 6 s.
    expect(m.secondsToDrain(3, T0 + 4000)).toBe(6);
  });

  it('forgets hand-outs older than its window: the pace is the current one', () => {
    const m = new DrainMeter(10);
    for (let i = 0; i < 100; i++) m.record(T0 + i);
    expect(m.secondsToDrain(10, T0 + 11_000)).toBeNull();
    m.record(T0 + 11_000);
    expect(m.perSecond(T0 + 11_500)).toBe(1);
  });
});
