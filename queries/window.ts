import type { DatasetDescriptor } from '../datasets/index.ts';
import { addDays, floorToSecond, parseInstant, type Instant } from './instant.ts';

export interface Window {
  from: Instant;
  to: Instant;
}

export type WindowResult = { ok: true; window: Window } | { ok: false; parameter: 'from' | 'to'; message: string };

const SYNTAX = 'must be YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS[.ffffff]] with Z, ±HH:MM or no offset (UTC)';

/** Resolves the half-open window [from, to) with the contract's defaults. */
export function resolveWindow(d: DatasetDescriptor, from: string | undefined, to: string | undefined, now: Instant): WindowResult {
  const end = to === undefined ? floorToSecond(now) : parseInstant(to);
  if (end === null) return { ok: false, parameter: 'to', message: SYNTAX };
  const start = from === undefined ? addDays(end, -(d.time?.defaultDays ?? 1)) : parseInstant(from);
  if (start === null) return { ok: false, parameter: 'from', message: SYNTAX };
  if (start >= end) return { ok: false, parameter: 'from', message: 'must be before to (the window is half-open, [from, to))' };
  return { ok: true, window: { from: start, to: end } };
}
