import type { DatasetDescriptor } from '../datasets/index.ts';
import { addDays, floorToSecond, MIN_INSTANT, parseInstant, type Instant } from './instant.ts';

export interface Window {
  from: Instant;
  to: Instant;
}

/** Every instant the data can hold: listings that are not for a request's window use it. */
export const ALL_TIME: Window = { from: -(2n ** 62n), to: 2n ** 62n };

export type WindowResult = { ok: true; window: Window } | { ok: false; parameter: 'from' | 'to'; message: string };

/** What `from` and `to` accept, as a parameter error says it. */
export const WINDOW_SYNTAX = 'must be YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS[.ffffff]] with Z, ±HH:MM or no offset (UTC)';

/** Resolves the half-open window [from, to) with the contract's defaults. */
export function resolveWindow(d: DatasetDescriptor, from: string | undefined, to: string | undefined, now: Instant): WindowResult {
  const end = to === undefined ? floorToSecond(now) : parseInstant(to);
  if (end === null) return { ok: false, parameter: 'to', message: WINDOW_SYNTAX };
  // A default start before year 1 would be echoed as a window the API itself rejects: clamp it.
  const start = from === undefined ? maxInstant(addDays(end, -(d.time?.defaultDays ?? 1)), MIN_INSTANT) : parseInstant(from);
  if (start === null) return { ok: false, parameter: 'from', message: WINDOW_SYNTAX };
  if (from === undefined && start >= end) return { ok: false, parameter: 'to', message: 'must be after 0001-01-01T00:00:00Z when from is not given' };
  if (start >= end) return { ok: false, parameter: 'from', message: 'must be before to (the window is half-open, [from, to))' };
  return { ok: true, window: { from: start, to: end } };
}

const maxInstant = (a: Instant, b: Instant): Instant => (a > b ? a : b);
