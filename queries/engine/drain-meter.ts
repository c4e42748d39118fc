/**
 * How fast something drains, over the last `windowSeconds` whole seconds: requests handed a
 * connection (a queue-full 503 tells the client when the queue in front of it will have drained,
 * from the pace measured now, not a fixed figure), or temp bytes given back. One counter per
 * second in a ring: constant memory and constant work per event, whatever the load.
 */
export class DrainMeter {
  private readonly counts: number[];
  private readonly seconds: number[];

  constructor(private readonly windowSeconds = 10) {
    this.counts = new Array<number>(windowSeconds).fill(0);
    this.seconds = new Array<number>(windowSeconds).fill(-1);
  }

  /** `amount` (one request handed a connection, or bytes given back) drained at `nowMs`. */
  record(nowMs: number, amount = 1): void {
    const second = Math.floor(nowMs / 1000);
    const i = second % this.windowSeconds;
    if (this.seconds[i] !== second) {
      this.seconds[i] = second;
      this.counts[i] = 0;
    }
    this.counts[i]! += amount;
  }

  /** What drained over the window before `nowMs` (the current, partial second included), and the oldest second counted. */
  total(nowMs: number): { amount: number; oldestSecond: number } {
    const now = Math.floor(nowMs / 1000);
    let amount = 0;
    let oldestSecond = now;
    for (let i = 0; i < this.windowSeconds; i++) {
      const s = this.seconds[i]!;
      if (s > now - this.windowSeconds && s <= now) {
        amount += this.counts[i]!;
        oldestSecond = Math.min(oldestSecond, s);
      }
    }
    return { amount, oldestSecond };
  }

  /** Drained per second over the window before `nowMs`. */
  perSecond(nowMs: number): number {
    const { amount, oldestSecond } = this.total(nowMs);
    // Elapsed time since the oldest counted second began: a young meter is not diluted by empty history.
    const elapsedSeconds = Math.max(1, (nowMs - oldestSecond * 1000) / 1000);
    return amount / elapsedSeconds;
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
