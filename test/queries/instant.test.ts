import { describe, expect, it } from 'vitest';
import { addDays, floorToSecond, formatInstant, instantFromDate, parseInstant } from '../../queries/instant.ts';

/** Epoch microseconds from an ISO text Date can parse (millisecond precision) plus extra microseconds. */
const us = (iso: string, extraMicros = 0n): bigint => BigInt(Date.parse(iso)) * 1000n + extraMicros;

describe('parseInstant accepts the contract forms', () => {
  it.each([
    ['2025-08-01', '2025-08-01T00:00:00.000Z'],
    ['2025-08-01T10:20', '2025-08-01T10:20:00.000Z'],
    ['2025-08-01T10:20:30', '2025-08-01T10:20:30.000Z'],
    ['2025-08-01T10:20:30Z', '2025-08-01T10:20:30.000Z'],
    ['2025-08-01T10:20Z', '2025-08-01T10:20:00.000Z'],
    ['2024-02-29T23:59:59', '2024-02-29T23:59:59.000Z'],
  ])('reads %s as UTC (bare date = 00:00, no offset = UTC)', (text, iso) => {
    expect(parseInstant(text)).toBe(us(iso));
  });

  it.each([
    ['.1', 100_000n],
    ['.12', 120_000n],
    ['.123', 123_000n],
    ['.000001', 1n],
    ['.123456', 123_456n],
    ['.5', 500_000n],
  ])('keeps the fraction %s to the microsecond', (fraction, micros) => {
    expect(parseInstant(`2025-08-01T10:20:30${fraction}Z`)).toBe(us('2025-08-01T10:20:30Z', micros));
  });

  it.each([
    ['2025-08-01T10:20:30+02:00', '2025-08-01T08:20:30Z'],
    ['2025-08-01T10:20:30-05:30', '2025-08-01T15:50:30Z'],
    ['2025-08-01T00:30+02:00', '2025-07-31T22:30:00Z'],
    ['2025-12-31T20:00:00-05:00', '2026-01-01T01:00:00Z'],
    ['2025-08-01T10:20:30+00:00', '2025-08-01T10:20:30Z'],
    ['2025-08-01T10:20:30.000001-00:30', '2025-08-01T10:50:30.000001Z'],
  ])('converts the offset of %s to UTC exactly (%s)', (text, utc) => {
    expect(parseInstant(text)).toBe(parseInstant(utc));
    expect(formatInstant(parseInstant(text)!)).toBe(utc);
  });
});

describe('parseInstant rejects what the contract does not allow', () => {
  it.each([
    ['empty text', ''],
    ['garbage', 'yesterday'],
    ['an impossible day', '2025-02-30'],
    ['29 February outside a leap year', '2025-02-29'],
    ['month 13', '2025-13-01'],
    ['hour 24', '2025-08-01T24:00'],
    ['minute 60', '2025-08-01T10:60'],
    ['second 60', '2025-08-01T10:20:60Z'],
    ['unpadded month and day', '2025-1-1'],
    ['trailing junk after Z', '2025-08-01T10:00Zjunk'],
    ['trailing junk after a date', '2025-08-01x'],
    ['a space instead of T', '2025-08-01 10:00'],
    ['a lower-case t', '2025-08-01t10:00'],
    ['an hour without minutes', '2025-08-01T10'],
    ['seven fraction digits', '2025-08-01T10:20:30.1234567'],
    ['a dot without digits', '2025-08-01T10:20:30.Z'],
    ['an offset on a bare date', '2025-08-01Z'],
    ['an offset without colon', '2025-08-01T10:00+0200'],
    ['offset minutes 60', '2025-08-01T10:00+02:60'],
    ['an offset beyond 18 hours', '2025-08-01T10:00+19:00'],
    ['a leading space', ' 2025-08-01'],
  ])('rejects %s (%j)', (_what, text) => {
    expect(parseInstant(text)).toBeNull();
  });
});

describe('formatInstant', () => {
  it('writes whole seconds without a fraction', () => {
    expect(formatInstant(us('2025-08-01T10:20:30Z'))).toBe('2025-08-01T10:20:30Z');
    expect(formatInstant(0n)).toBe('1970-01-01T00:00:00Z');
  });

  it.each([
    [500_000n, '.5'],
    [120_000n, '.12'],
    [100n, '.0001'],
    [1n, '.000001'],
    [123_456n, '.123456'],
    [10n, '.00001'],
  ])('trims trailing zeros of the fraction (+%i µs -> %s)', (micros, fraction) => {
    expect(formatInstant(us('2025-08-01T10:20:30Z', micros))).toBe(`2025-08-01T10:20:30${fraction}Z`);
  });

  it.each([
    [-1n, '1969-12-31T23:59:59.999999Z'],
    [-1_000_000n, '1969-12-31T23:59:59Z'],
    [-500_000n, '1969-12-31T23:59:59.5Z'],
    [-1_000_001n, '1969-12-31T23:59:58.999999Z'],
    [us('1900-03-01T12:00:00Z', 7n), '1900-03-01T12:00:00.000007Z'],
  ])('formats the pre-1970 instant %i as %s', (t, text) => {
    expect(formatInstant(t)).toBe(text);
  });

  it('round-trips sub-millisecond instants exactly: parse(format(t)) === t', () => {
    let seed = 12345n;
    const span = us('2100-01-01T00:00:00Z') - us('1900-01-01T00:00:00Z');
    for (let i = 0; i < 2000; i++) {
      seed = (seed * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n;
      const t = us('1900-01-01T00:00:00Z') + (seed % span);
      expect(parseInstant(formatInstant(t))).toBe(t);
    }
  });
});

describe('instant helpers', () => {
  it('floorToSecond drops the fraction, towards the past also before 1970', () => {
    expect(floorToSecond(us('2025-08-01T10:20:30Z', 999_999n))).toBe(us('2025-08-01T10:20:30Z'));
    expect(floorToSecond(-1_500_000n)).toBe(-2_000_000n);
    expect(floorToSecond(-2_000_000n)).toBe(-2_000_000n);
  });

  it('addDays moves by whole UTC days', () => {
    expect(formatInstant(addDays(us('2024-02-28T23:00:00Z'), 1))).toBe('2024-02-29T23:00:00Z');
    expect(formatInstant(addDays(us('2025-03-01T00:00:00Z'), -30))).toBe('2025-01-30T00:00:00Z');
  });

  it('instantFromDate keeps the milliseconds of a Date', () => {
    expect(instantFromDate(new Date('2025-08-01T10:20:30.123Z'))).toBe(us('2025-08-01T10:20:30Z', 123_000n));
  });
});
