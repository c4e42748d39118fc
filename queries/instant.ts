/**
 * Instants are epoch microseconds (bigint): DuckDB timestamps have microsecond precision, and a
 * continuation point must be exact or a row at a sub-millisecond time would be lost or repeated.
 */
export type Instant = bigint;

const US_PER_MS = 1000n;
const US_PER_DAY = 86_400_000_000n;

/**
 * The contract's window syntax: `YYYY-MM-DD`, or with `THH:MM[:SS[.ffffff]]` and an optional `Z` or
 * `±HH:MM`. The one pattern: parsed here, and the `pattern` of `from`/`to` in the OpenAPI document.
 */
export const WINDOW_PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** Parses the contract's window syntax; returns null when the text is not a valid instant. */
export function parseInstant(text: string): Instant | null {
  const m = WINDOW_PATTERN.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  // setUTCFullYear, unlike Date.UTC, does not read years 0-99 as 1900-1999.
  const check = new Date(0);
  check.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  check.setUTCHours(Number(h), Number(mi), Number(s), 0);
  // Dates roll 2025-02-30 over into March: reject anything that does not round-trip.
  if (check.getUTCFullYear() !== Number(y) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d)) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  const offsetMinutes = zoneOffsetMinutes(zone);
  if (offsetMinutes === null) return null;
  const micros = BigInt(frac.padEnd(6, '0') || '0');
  const t = BigInt(check.getTime()) * US_PER_MS + micros - BigInt(offsetMinutes) * 60_000_000n;
  // Offsets may push an instant out of four-digit years, which neither the wire format nor DuckDB can carry.
  return t >= MIN_INSTANT && t < MAX_INSTANT ? t : null;
}

/** 0001-01-01T00:00:00Z: the first instant the wire format (four-digit years) can carry. */
export const MIN_INSTANT = BigInt(Date.parse('0001-01-01T00:00:00Z')) * US_PER_MS;
const MAX_INSTANT = BigInt(Date.parse('+010000-01-01T00:00:00Z')) * US_PER_MS;

function zoneOffsetMinutes(zone: string): number | null {
  if (zone === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(4, 6));
  if (hours > 18 || minutes > 59) return null;
  return sign * (hours * 60 + minutes);
}

/** `YYYY-MM-DDTHH:MM:SSZ`, with a fraction only when it is non-zero (trailing zeros dropped). */
export function formatInstant(t: Instant): string {
  const ms = t / US_PER_MS - (t % US_PER_MS < 0n ? 1n : 0n);
  const micros = t - ms * US_PER_MS;
  const base = new Date(Number(ms)).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  const fraction = (base.slice(20, 23) + String(micros).padStart(3, '0')).replace(/0+$/, '');
  return base.slice(0, 19) + (fraction ? `.${fraction}` : '') + 'Z';
}

export const instantFromDate = (d: Date): Instant => BigInt(d.getTime()) * US_PER_MS;

export const addDays = (t: Instant, days: number): Instant => t + BigInt(days) * US_PER_DAY;

/** Whole seconds, as the contract's default `to` ("now, whole seconds"). */
export const floorToSecond = (t: Instant): Instant => t - (((t % 1_000_000n) + 1_000_000n) % 1_000_000n);

