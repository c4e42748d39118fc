import { createHash } from 'node:crypto';
import type { AggregateShape } from '../sql/aggregate-shape.ts';
import type { QuerySpec } from '../sql/compile.ts';

/** Shapes remembered, the least recently used forgotten first: enough for the shapes a process serves at once, a few dozen bytes each. */
const MOST_SHAPES = 300;

/**
 * Groups per row of each shape's last one-bucket window run as one part (after its parts' groups
 * were too many to merge, or when it was not cut), least recently used first. Only the plan reads
 * it: a window cut or not gives the same groups.
 */
const rates = new Map<string, number>();

/** One-bucket windows of many rows this process planned cut inside their bucket, and planned whole (their shape's rate too high). */
const plans = { cut: 0, whole: 0 };
export const splitPlans = (): Readonly<typeof plans> => ({ ...plans });

/**
 * What an aggregate computes, apart from its window: the dataset, the filters and wire-only
 * values, the correction, the keys, cell, interval and stats. Hashed, so that a long filter
 * (a box's thousands of shapes) costs the memo no more than a short one.
 */
export function shapeKey(spec: QuerySpec, shape: AggregateShape): string {
  const what = [spec.descriptor.name, spec.filters, spec.params, spec.correction?.id ?? null, shape];
  return createHash('sha256').update(JSON.stringify(what)).digest('base64url');
}

/** Whether a one-bucket window of `rows` rows (footer counts) is worth cutting inside its bucket: not when its shape's last rate gives it more than `most` groups, which the merge gives up on. */
export function splitWorthIt(key: string, rows: number, most: number): boolean {
  const perRow = rates.get(key);
  if (perRow !== undefined) rememberRate(key, perRow);
  // At most one group a row: a window of no more rows than the merge holds always fits.
  const worth = rows <= most || perRow === undefined || rows * perRow <= most;
  plans[worth ? 'cut' : 'whole']++;
  return worth;
}

/** The groups per row a shape's whole one-bucket window had, run as one part: remembered for the shape's next window. */
export function rememberRate(key: string, perRow: number): void {
  rates.delete(key);
  rates.set(key, perRow);
  if (rates.size > MOST_SHAPES) rates.delete(rates.keys().next().value!);
}
