/**
 * How fast requests leave the wait for a connection, over the last `windowSeconds` whole seconds:
 * a queue-full 503 tells the client when the queue in front of it will have drained, from the
 * pace measured now, not a fixed figure. One counter per second in a ring: constant memory and
 * constant work per event, whatever the load.
 */
export class DrainMeter {
  private readonly counts: number[];
  private readonly seconds: number[];

  constructor(private readonly windowSeconds = 10) {
    this.counts = new Array<number>(windowSeconds).fill(0);
    this.seconds = new Array<number>(windowSeconds).fill(-1);
  }

  /** One request was handed a connection at `nowMs`. */
  record(nowMs: number): void {
    const second = Math.floor(nowMs / 1000);
    const i = second % this.windowSeconds;
    if (this.seconds[i] !== second) {
      this.seconds[i] = second;
      this.counts[i] = 0;
    }
    this.counts[i]!++;
  }

  /** Hand-outs per second over the window before `nowMs` (the current, partial second included). */
  perSecond(nowMs: number): number {
    const now = Math.floor(nowMs / 1000);
    let total = 0;
    let oldest = now;
    for (let i = 0; i < this.windowSeconds; i++) {
      const s = this.seconds[i]!;
      if (s > now - this.windowSeconds && s <= now) {
        total += this.counts[i]!;
        oldest = Math.min(oldest, s);
      }
    }
    // Elapsed time since the oldest counted second began: a young meter is not diluted by empty history.
    const elapsedSeconds = Math.max(1, (nowMs - oldest * 1000) / 1000);
    return total / elapsedSeconds;
  }

  /**
   * Whole seconds until `waiting` requests ahead would have been handed a connection at the
   * measured pace (at least 1), or null when nothing was handed out in the window (no pace known).
   */
  secondsToDrain(waiting: number, nowMs: number): number | null {
    const ms = this.msToDrain(waiting, nowMs);
    return ms === null ? null : Math.max(1, Math.ceil(ms / 1000));
  }

  /** Milliseconds until `waiting` requests would have been handed a connection at the measured pace; null: no pace known. */
  msToDrain(waiting: number, nowMs: number): number | null {
    const rate = this.perSecond(nowMs);
    return rate > 0 ? (waiting / rate) * 1000 : null;
  }
}
