import { describe, expect, it } from 'vitest';
import { burntAreas } from '../../datasets/burnt-areas.ts';
import { fireDanger } from '../../datasets/fire-danger.ts';
import { hotspots } from '../../datasets/hotspots.ts';
import { sensorReadings } from '../../datasets/sensor-readings.ts';
import { formatInstant, parseInstant } from '../../queries/instant.ts';
import { resolveWindow, type WindowResult } from '../../queries/window.ts';

const NOW = parseInstant('2025-08-02T10:20:30.123456Z')!;

function texts(r: WindowResult): { from: string; to: string } {
  if (!r.ok) throw new Error(`expected a window, got ${r.parameter}: ${r.message}`);
  return { from: formatInstant(r.window.from), to: formatInstant(r.window.to) };
}

describe('resolveWindow defaults', () => {
  it('omitted to is now floored to whole seconds', () => {
    expect(texts(resolveWindow(hotspots, '2025-08-01', undefined, NOW)).to).toBe('2025-08-02T10:20:30Z');
  });

  it('omitted to floors a pre-1970 now towards the past', () => {
    const r = resolveWindow(hotspots, undefined, undefined, -1_500_000n);
    expect(r.ok && r.window.to).toBe(-2_000_000n);
  });

  it.each([
    [hotspots.name, hotspots, '2025-08-01T10:20:30Z'],
    [sensorReadings.name, sensorReadings, '2025-08-01T10:20:30Z'],
    [burntAreas.name, burntAreas, '2025-07-03T10:20:30Z'],
    [fireDanger.name, fireDanger, '2025-07-03T10:20:30Z'],
  ])('omitted from is to minus the default days of %s', (_name, d, from) => {
    expect(texts(resolveWindow(d, undefined, undefined, NOW))).toEqual({ from, to: '2025-08-02T10:20:30Z' });
  });

  it('omitted from counts back from an explicit to, not from now', () => {
    expect(texts(resolveWindow(burntAreas, undefined, '2024-03-01', NOW))).toEqual({ from: '2024-01-31T00:00:00Z', to: '2024-03-01T00:00:00Z' });
  });

  it('explicit from and to are used as given, offsets converted to UTC', () => {
    expect(texts(resolveWindow(hotspots, '2025-07-01T02:00+02:00', '2025-07-02T00:00:00.5Z', NOW))).toEqual({
      from: '2025-07-01T00:00:00Z',
      to: '2025-07-02T00:00:00.5Z',
    });
  });
});

describe('resolveWindow errors name the parameter', () => {
  it('from equal to to is an error naming from (the window is half-open)', () => {
    const r = resolveWindow(hotspots, '2025-08-01', '2025-08-01T00:00Z', NOW);
    expect(r).toMatchObject({ ok: false, parameter: 'from' });
  });

  it('from after to is an error naming from', () => {
    const r = resolveWindow(hotspots, '2025-08-02', '2025-08-01', NOW);
    expect(r).toMatchObject({ ok: false, parameter: 'from' });
  });

  it('from one microsecond before to is accepted', () => {
    expect(resolveWindow(hotspots, '2025-08-01T00:00:00.999999Z', '2025-08-01T00:00:01Z', NOW).ok).toBe(true);
  });

  it('an explicit from after the default to (now) is an error naming from', () => {
    expect(resolveWindow(hotspots, '2025-08-03', undefined, NOW)).toMatchObject({ ok: false, parameter: 'from' });
  });

  it('bad syntax in from names from', () => {
    expect(resolveWindow(hotspots, '2025-02-30', '2025-08-01', NOW)).toMatchObject({ ok: false, parameter: 'from' });
  });

  it('bad syntax in to names to', () => {
    expect(resolveWindow(hotspots, '2025-08-01', '2025-08-01 10:00', NOW)).toMatchObject({ ok: false, parameter: 'to' });
  });

  it('the syntax message tells the accepted forms', () => {
    const r = resolveWindow(hotspots, 'soon', undefined, NOW);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain('YYYY-MM-DD');
  });
});
