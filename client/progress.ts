import type { ClientIo } from './io.ts';
import type { RetryNotice } from './retry.ts';

const REDRAW_MS = 200;

const clock = (ms: number): string => {
  const s = Math.floor(ms / 1000);
  const hms = [Math.floor(s / 3600), Math.floor(s / 60) % 60, s % 60].map((n) => String(n).padStart(2, '0'));
  return s >= 3600 ? hms.join(':') : hms.slice(1).join(':');
};

/** One self-overwriting status line on a terminal (rows, windows, rate, elapsed); silent elsewhere. */
export class Progress {
  private readonly startedMs = Date.now();
  private rowsThisRun = 0;
  private pageRows = 0;
  private lastDrawMs = 0;
  private drawn = false;

  constructor(
    private readonly io: ClientIo,
    private readonly label: string,
    private readonly rowsBefore: number,
    private windows: number,
  ) {}

  /** Rows of the page in flight so far (reset by a retry). */
  update(pageRows: number): void {
    this.pageRows = pageRows;
    this.draw(false);
  }

  windowDone(rows: number): void {
    this.rowsThisRun += rows;
    this.pageRows = 0;
    this.windows++;
    this.draw(true);
  }

  /** A warning worth keeping in a log (retries): printed on every stream, above the status line. */
  note(text: string): void {
    this.clear();
    this.io.stderr.write(`${text}\n`);
    this.draw(true);
  }

  finish(text: string): void {
    this.clear();
    if (this.io.stderrIsTTY) this.io.stderr.write(`${text}\n`);
  }

  private line(): string {
    const elapsedMs = Date.now() - this.startedMs;
    const rows = this.rowsThisRun + this.pageRows;
    const rate = elapsedMs > 0 ? Math.round((rows * 1000) / elapsedMs) : 0;
    const total = (this.rowsBefore + rows).toLocaleString('en-US');
    return `${this.label}: ${total} rows, ${this.windows} windows done, ${rate.toLocaleString('en-US')} rows/s, ${clock(elapsedMs)} elapsed`;
  }

  private draw(force: boolean): void {
    if (!this.io.stderrIsTTY) return;
    const now = Date.now();
    if (!force && now - this.lastDrawMs < REDRAW_MS) return;
    this.lastDrawMs = now;
    this.io.stderr.write(`\r\x1b[K${this.line()}`);
    this.drawn = true;
  }

  private clear(): void {
    if (this.drawn) this.io.stderr.write('\r\x1b[K');
    this.drawn = false;
  }
}

export const retryMessage = (what: string, n: RetryNotice): string =>
  `${what}: ${n.reason}; retry ${n.attempt}/${n.attempts - 1} in ${(n.delayMs / 1000).toFixed(1)} s`;
