import { describe, expect, it } from 'vitest';
import { parseDay } from '../../demo/calendar.ts';
import { createEventSource } from '../../demo/event-source.ts';
import { HOTSPOTS_PER_DAY, seasonFactor } from '../../demo/fire-events.ts';
import { HOTSPOT_STAGE, passRows } from '../../demo/plans/hotspot-plan.ts';

const PIXELS = HOTSPOT_STAGE.findIndex((column) => column.name === 'n');

/** Pixels the hotspot plan would write per day (the stage's `n` column), without DuckDB. */
function pixelsPerDay(seed: number, scale: number, firstDay: number, days: number): number[] {
  const events = createEventSource(seed, scale);
  return Array.from({ length: days }, (_, index) => {
    const day = firstDay + index;
    return passRows(seed, day, events.activeOn(day)).reduce((sum, row) => sum + Number(row[PIXELS]), 0);
  });
}

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

describe('hotspot volume calibration', () => {
  it('gives about HOTSPOTS_PER_DAY x 365 x scale over a year (the 5 M bench target at scale 10)', () => {
    const year = pixelsPerDay(42, 1, parseDay('2024-03-01'), 365);
    const expected = 365 * HOTSPOTS_PER_DAY;
    expect(Math.abs(sum(year) - expected) / expected).toBeLessThan(0.1);
  });

  it('scales with `scale`', () => {
    const first = parseDay('2024-07-01');
    const base = sum(pixelsPerDay(3, 1, first, 40));
    const doubled = sum(pixelsPerDay(3, 2, first, 40));
    expect(doubled / base).toBeGreaterThan(1.7);
    expect(doubled / base).toBeLessThan(2.3);
  });

  it('burns far more in summer than in winter', () => {
    const august = sum(pixelsPerDay(9, 1, parseDay('2024-08-01'), 31));
    const january = sum(pixelsPerDay(9, 1, parseDay('2024-01-01'), 31));
    expect(august / january).toBeGreaterThan(4);
    const mean = sum(Array.from({ length: 365 }, (_, index) => seasonFactor(parseDay('2023-01-01') + index))) / 365;
    expect(mean).toBeCloseTo(1, 6);
  });
});
