/**
 * QUERY_TIMEOUT_MS as time the engine spends on one request: it runs while the request plans and
 * counts, and while one of its groups is being written; it stands still while the response waits
 * for its client. `onSpent` is called once, when the running time reaches the limit.
 */
export class EngineBudget {
  private spentMs = 0;
  private active = 0;
  private since = 0;
  private timer: NodeJS.Timeout | null = null;
  private over = false;

  constructor(private readonly limitMs: number, private readonly onSpent: () => void) {}

  get spent(): boolean {
    return this.over;
  }

  /** Starts counting (nested calls count once); the returned function stops this one. */
  run(): () => void {
    if (this.active++ === 0 && !this.over) {
      this.since = performance.now();
      this.timer = setTimeout(() => this.expire(), Math.max(0, this.limitMs - this.spentMs));
    }
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      if (--this.active === 0 && this.timer) this.pause();
    };
  }

  /** Ends the budget for good (the response is over): no callback later. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.over = true;
  }

  private pause(): void {
    clearTimeout(this.timer!);
    this.timer = null;
    this.spentMs += performance.now() - this.since;
  }

  private expire(): void {
    this.timer = null;
    this.over = true;
    this.onSpent();
  }
}
