import { createHash } from 'node:crypto';
import type { AggregateShape } from './aggregate-shape.ts';
import type { QuerySpec } from '../sql/compile.ts';
import type { Groups } from './aggregate-groups.ts';
import type { QueryContext } from '../sources/context.ts';

/** Shapes remembered, the least recently used forgotten first: enough for the shapes a server serves at once, a few dozen bytes each. */
const MOST_SHAPES = 300;

/** Groups per row of a shape's last one-bucket window run as one part (`whole`: after its parts' groups were too many to merge, or when it was not cut), and of its last one cut and merged. */
interface Rates {
  whole: number | null;
  merged: number | null;
}

/** What an aggregate reads with: a request's context and its server's split memo. */
export interface AggregateContext extends QueryContext {
  splitMemo: SplitMemo;
}

/**
 * What an aggregate computes, apart from its window: the dataset, the filters and wire-only
 * values, the correction, the keys, cell, interval and stats. Hashed, so that a long filter
 * (a box's thousands of shapes) costs the memo no more than a short one.
 */
export function shapeKey(spec: QuerySpec, shape: AggregateShape): string {
  const what = [spec.descriptor.name, spec.filters, spec.params, spec.correction?.id ?? null, shape];
  return createHash('sha256').update(JSON.stringify(what)).digest('base64url');
}

/**
 * One server's plans for one-bucket windows of many rows: each shape's rates (least recently used
 * first; only the plan reads them: a window cut or not gives the same groups), and how many were
 * planned cut inside their bucket, planned whole (their shape's rate too high), and cut but stopped
 * before their parts all ran (one part alone had more groups than the merge holds), for /metrics.
 */
export class SplitMemo {
  private readonly rates = new Map<string, Rates>();
  private readonly counts = { cut: 0, whole: 0, stopped: 0 };

  /** The plans so far. */
  plans(): Readonly<{ cut: number; whole: number; stopped: number }> {
    return { ...this.counts };
  }

  /** A cut window's parts were stopped early. */
  stopped(): void {
    this.counts.stopped++;
  }

  /** Whether a one-bucket window of `rows` rows (footer counts) is worth cutting inside its bucket: not when its shape's last rate gives it more than `most` groups, which the merge gives up on. */
  splitWorthIt(key: string, rows: number, most: number): boolean {
    const perRow = this.remembered(key)?.whole ?? undefined;
    // At most one group a row: a window of no more rows than the merge holds always fits.
    const worth = rows <= most || perRow === undefined || rows * perRow <= most;
    this.counts[worth ? 'cut' : 'whole']++;
    return worth;
  }

  /**
   * Whether a one-bucket window of `rows` rows cut inside its bucket may have more groups than the
   * merge holds (`most`), so that its parts are worth watching from a first piece on: unless one of
   * its shape's last rates says it fits (a rate is higher over fewer rows: it seldom says so wrongly).
   */
  mayOverflow(key: string, rows: number, most: number): boolean {
    const known = this.remembered(key);
    return ![known?.whole, known?.merged].some((perRow) => perRow != null && rows * perRow <= most);
  }

  /** A shape's rates, now its most recently used. */
  private remembered(key: string): Rates | undefined {
    const known = this.rates.get(key);
    if (known) {
      this.rates.delete(key);
      this.rates.set(key, known);
    }
    return known;
  }

  /** The groups per row a shape's one-bucket window had, run whole as one part or cut and merged: remembered for the shape's next window. */
  rememberRate(key: string, perRow: number, run: keyof Rates = 'whole'): void {
    const known = this.rates.get(key) ?? { whole: null, merged: null };
    this.rates.delete(key);
    this.rates.set(key, { ...known, [run]: perRow });
    if (this.rates.size > MOST_SHAPES) this.rates.delete(this.rates.keys().next().value!);
  }

  /**
   * A one-bucket window's groups cut inside its bucket and merged (`split`, watched when it may
   * overflow), its rate then remembered; null when its shape's rate says it has more groups than
   * the merge holds (`most`), or when the merge gave up: the window is then run whole.
   */
  async mergedIfWorthIt(key: string, rows: number, most: number, split: (watched: boolean) => Promise<Groups | null>): Promise<Groups | null> {
    if (!this.splitWorthIt(key, rows, most)) return null;
    const merged = await split(this.mayOverflow(key, rows, most));
    if (merged && rows > 0) this.rememberRate(key, merged.returned / rows, 'merged');
    return merged;
  }
}
