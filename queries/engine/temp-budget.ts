import { TempBudgetFullError } from '../errors.ts';
import { DrainMeter } from './drain-meter.ts';

export interface Reservation {
  readonly bytes: number;
  /** Holds `bytes` in all (a file that grows as it is written), or throws TempBudgetFullError and holds what it held. */
  growTo(bytes: number): void;
  /** Keeps only `bytes` reserved (a whole window that turned out smaller than reserved). */
  shrinkTo(bytes: number): void;
  /** Idempotent. */
  release(): void;
}

/** How far back released bytes are averaged to estimate when room will be free again. */
const RATE_WINDOW_SECONDS = 30;

/**
 * Disk reserved in TEMP_DIR by responses that write rows ahead of their client: each reserves what
 * it may hold at most before it starts, so the total stays within TEMP_DIR_MAX_MB however many
 * clients read slowly, and a full budget is a refusal, never a stall.
 */
export class TempBudget {
  private used = 0;
  /** Bytes given back per second: a ring, so a server that is never refused does not keep every release. */
  private readonly released = new DrainMeter(RATE_WINDOW_SECONDS);

  constructor(readonly maxBytes: number, private readonly fallbackRetrySeconds: number) {}

  get usedBytes(): number {
    return this.used;
  }

  /** Reserves `bytes`, or throws TempBudgetFullError with the seconds until about that much is free. */
  reserve(bytes: number, nowMs = Date.now()): Reservation {
    let held = 0;
    const give = (n: number) => {
      this.used -= n;
      this.released.record(Date.now(), n);
      held -= n;
    };
    const growTo = (n: number, atMs = Date.now()) => {
      const more = n - held;
      if (more <= 0) return;
      if (this.used + more > this.maxBytes) throw new TempBudgetFullError(this.retryAfterSeconds(this.used + more - this.maxBytes, atMs));
      this.used += more;
      held = n;
    };
    growTo(bytes, nowMs);
    return {
      get bytes() {
        return held;
      },
      growTo: (n) => growTo(n),
      shrinkTo: (n) => (n < held ? give(held - n) : undefined),
      release: () => (held > 0 ? give(held) : undefined),
    };
  }

  /**
   * Holds `bytes` for `reservation`: less gives the rest back; more is lent only while at most half
   * the budget is then in use (true when held), so that lent room leaves at least half the budget
   * to reservations.
   */
  resize(reservation: Reservation, bytes: number): boolean {
    if (bytes <= reservation.bytes) {
      reservation.shrinkTo(bytes);
      return true;
    }
    if (this.used + (bytes - reservation.bytes) > this.maxBytes / 2) return false;
    reservation.growTo(bytes);
    return true;
  }

  /** Seconds until `missing` bytes are expected back, from how fast reservations were released lately. */
  private retryAfterSeconds(missing: number, nowMs: number): number {
    const released = this.released.total(nowMs).amount;
    if (released === 0) return this.fallbackRetrySeconds;
    const perSecond = released / RATE_WINDOW_SECONDS;
    return Math.min(this.fallbackRetrySeconds * 10, Math.max(1, Math.ceil(missing / perSecond)));
  }
}
