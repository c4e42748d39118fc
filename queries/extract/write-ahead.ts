import { rm, stat } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { readWhole, tempFileBase } from '../encode/copy-stream.ts';
import type { Lease } from '../engine/engine.ts';
import { StreamIncompleteError } from '../errors.ts';

export interface WriteAheadPlan {
  tempDir: string;
  groups: number;
  /** Writes group `i` into `target` on `c`: the rows written (a failure throws). `signal`: the response is over. */
  write(i: number, c: DuckDBConnection, target: string, signal: AbortSignal): Promise<number>;
  /** A connection that may be waited for (this response has no group being written). */
  waitLease(signal: AbortSignal): Promise<Lease>;
  /** An idle connection now, or null: extra groups never make anyone wait. */
  tryLease(): Lease | null;
  /** Groups written at once at most. */
  maxInFlight: number;
  /** Bytes written and not yet sent beyond which no further group is started. */
  aheadBytes: number;
  /**
   * Holds `bytes` in all in TEMP_DIR for this response: more than `aheadBytes` (one group beyond
   * the bound) only when the temp budget lends it (true); less gives back what was lent. Absent:
   * never more than `aheadBytes`.
   */
  room?(bytes: number): boolean;
  expected: number;
  /** Bytes to drop from the start of the first file with any (the separator before the first GeoJSON Feature). */
  skipFirstBytes: number;
  signal: AbortSignal;
  /** Marks the engine working for this request while a group is written; returns the stop. */
  engineWork(): () => void;
  /** Throws when the files of group `i` are no longer the ones checked. */
  verify(i: number): Promise<void>;
  /** The bytes of group `i`'s file that are sent (a Parquet group's row groups without its own header and footer); default: all. */
  span?(i: number, size: number): { start: number; end: number };
}

/**
 * Streams groups written into temp files ahead of the client, in order. A connection is leased
 * for one group's write only: a client that falls behind stops production (no more than
 * `aheadBytes` wait on disk) and holds no connection; production resumes when it catches up.
 * A failed write throws, and the groups' row counts must sum to the promised count, or the
 * response is aborted.
 */
export function streamWrittenAhead(plan: WriteAheadPlan): AsyncGenerator<Buffer> {
  return new WriteAhead(plan).run();
}

class WriteAhead {
  private readonly base: string;
  private readonly stop = new AbortController();
  private readonly signal: AbortSignal;
  private readonly results: Promise<number>[] = [];
  private readonly sizes: number[] = [];
  private next = 0;
  private inFlight = 0;
  /** Bytes written and not yet sent. */
  private ahead = 0;
  private writtenBytes = 0;
  private writtenGroups = 0;

  constructor(private readonly plan: WriteAheadPlan) {
    this.base = tempFileBase(plan.tempDir);
    this.signal = AbortSignal.any([plan.signal, this.stop.signal]);
  }

  private fileOf(i: number): string {
    return `${this.base}-${i}.csv`;
  }

  private perGroup(): number {
    return this.writtenGroups > 0 ? this.writtenBytes / this.writtenGroups : 0;
  }

  /**
   * Room for one more group. One group is always written while the client is within the bound
   * (the next one is ready when the current one is sent, as large as a group may be); more while
   * the bytes expected stay within it; one group beyond it only while the rest fits within it (a
   * client that falls behind is never written further ahead) and the temp budget lends the room,
   * asked once a connection is free (groups of GeoJSON, about 55 MB, are otherwise written one at
   * a time on one core).
   */
  private room(): 'within' | 'beyond' | 'none' {
    if (this.inFlight === 0) return this.ahead < this.plan.aheadBytes || this.ahead === 0 ? 'within' : 'none';
    const expected = this.ahead + (this.inFlight + 1) * this.perGroup();
    if (expected <= this.plan.aheadBytes) return 'within';
    return expected - this.perGroup() <= this.plan.aheadBytes && this.plan.room ? 'beyond' : 'none';
  }

  private pump(): void {
    while (!this.signal.aborted && this.next < this.plan.groups && this.inFlight < this.plan.maxInFlight) {
      const room = this.room();
      if (room === 'none') return;
      // Only a response with no group being written waits for a connection; the rest take idle ones.
      const lease = this.inFlight === 0 ? this.plan.waitLease(this.signal) : this.plan.tryLease();
      if (!lease) return;
      if (room === 'beyond' && !this.plan.room!(this.ahead + (this.inFlight + 1) * this.perGroup())) {
        (lease as Lease).release();
        return;
      }
      const i = this.next++;
      this.inFlight++;
      this.results[i] = this.produce(i, lease);
      // Later groups may fail while an earlier file is still going out; each is awaited (and its
      // error thrown) in turn, so mark it handled now or Node treats it as unhandled.
      this.results[i].catch(() => undefined);
    }
  }

  private async produce(i: number, leasing: Lease | Promise<Lease>): Promise<number> {
    let rows: number;
    try {
      rows = await this.writeOn(await leasing, i);
    } finally {
      this.inFlight--;
    }
    const size = (await stat(this.fileOf(i))).size;
    this.sizes[i] = size;
    this.ahead += size;
    this.writtenBytes += size;
    this.writtenGroups++;
    this.pump();
    return rows;
  }

  /** One group on a leased connection, returned as soon as the group is written (or fails). */
  private async writeOn(lease: Lease, i: number): Promise<number> {
    // DuckDB forgets an interrupt that reaches a statement still being prepared: repeat it until
    // the write gives up, so an aborted response never keeps its connection for a whole group.
    let repeat: NodeJS.Timeout | undefined;
    const interrupt = () => {
      lease.connection.interrupt();
      repeat ??= setInterval(() => lease.connection.interrupt(), 50);
    };
    this.signal.addEventListener('abort', interrupt);
    const working = this.plan.engineWork();
    try {
      this.signal.throwIfAborted();
      await this.plan.verify(i);
      this.signal.throwIfAborted();
      const rows = await this.plan.write(i, lease.connection, this.fileOf(i), this.signal);
      this.signal.throwIfAborted();
      // Swapped while it was read: these rows may not be the checked file's.
      await this.plan.verify(i);
      return rows;
    } finally {
      this.signal.removeEventListener('abort', interrupt);
      clearInterval(repeat);
      working();
      lease.release();
    }
  }

  async *run(): AsyncGenerator<Buffer> {
    let rows = 0;
    let skip = this.plan.skipFirstBytes;
    try {
      this.pump();
      for (let done = 0; done < this.plan.groups; done++) {
        const result = this.results[done];
        if (!result) throw new Error(`group ${done} was never started`);
        rows += await result;
        const size = this.sizes[done]!;
        const span = this.plan.span?.(done, size) ?? { start: size > 0 ? skip : 0, end: size };
        let unsent = size;
        for await (const chunk of readWhole(this.fileOf(done), span.start, this.plan.signal, span.end)) {
          yield chunk;
          // A client that keeps up frees room as it reads, not only at the end of a group.
          this.ahead -= chunk.length;
          unsent -= chunk.length;
          this.pump();
        }
        if (size > 0) skip = 0;
        await rm(this.fileOf(done), { force: true });
        this.ahead -= unsent;
        // Room lent for a group beyond the bound goes back once it is no longer needed.
        this.plan.room?.(this.ahead + this.inFlight * this.perGroup());
        this.pump();
      }
      if (rows !== this.plan.expected) throw new StreamIncompleteError(this.plan.expected, rows);
    } finally {
      // Interrupts this response's writes (never a connection already handed back) and its waits.
      this.stop.abort(new Error('response over'));
      await Promise.all(this.results.map((p) => p.catch(() => undefined)));
      await Promise.all(this.results.map((_, i) => rm(this.fileOf(i), { force: true })));
    }
  }
}
