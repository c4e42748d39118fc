import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { EngineBusyError, EngineClosedError } from '../errors.ts';
import { sqlString } from '../sql/sql.ts';
import { DrainMeter } from './drain-meter.ts';

export interface EngineOptions {
  dataDir: string;
  threads: number;
  connections: number;
  memoryLimit: string;
  tempDir: string;
  /** Requests allowed to wait for a connection; more are refused at once rather than piling up. */
  maxQueued: number;
  /**
   * Longest wait, at the pace requests are being served, a request may be queued for: beyond it
   * the queue counts as full. Unset: only `maxQueued` bounds it.
   */
  maxQueueWaitMs?: number;
}

export interface Lease {
  connection: DuckDBConnection;
  release(): void;
}

/*
 * Two priorities. Interactive: a request before its first byte (checks, counts, a whole small window),
 * served first. Bulk: the next group of a long extract already streaming, served only when no
 * interactive request waits, never on the last connection (kept for requests before their first
 * byte), and never on every bulk connection for one client: small windows are not starved behind
 * big extracts, and one client's extracts cannot take every connection.
 */

/** A request waiting for a connection; `owner` is set for a bulk group (the client's key). */
interface Waiter {
  owner: string | null;
  wake(c: DuckDBConnection | null): void;
}

/** Settings applied once; lock_configuration then makes them unchangeable by any later statement. */
function lockdownStatements(o: EngineOptions): string[] {
  const dirs = [path.resolve(o.dataDir) + '/', path.resolve(o.tempDir) + '/'].map(sqlString);
  return [
    `SET threads = ${Math.max(1, Math.trunc(o.threads))}`,
    `SET memory_limit = '${o.memoryLimit.replaceAll("'", '')}'`,
    `SET temp_directory = ${dirs[1]}`,
    // The OS page cache already holds hot Parquet files; DuckDB's own copy would grow with every
    // file an extract touches (memory must stay flat whatever the window).
    'SET enable_external_file_cache = false',
    // DuckDB's allocator keeps what a statement freed for the next one (up to 128 MiB a thread
    // after each task by default): under a burst of windows four connections held ~100 MB after
    // it. Handed back past 8 MB a task, and purged by jemalloc's own threads as pages go idle.
    "SET allocator_flush_threshold = '8MB'",
    'SET allocator_background_threads = true',
    `SET allowed_directories = [${dirs.join(', ')}]`,
    'SET enable_external_access = false',
    'SET lock_configuration = true',
  ];
}

/**
 * One DuckDB instance locked to DATA_DIR and a fixed pool of connections. Idle connections are a
 * stack: the one given back last is handed out first. Requests that wait are served in arrival
 * order, every interactive one before any bulk one (the first bulk waiter within its share).
 */
export class Engine {
  private readonly idle: DuckDBConnection[] = [];
  private readonly waiters: Waiter[] = [];
  /** Streaming extracts waiting to write their next group; they never count against DUCKDB_QUEUE_MAX. */
  private readonly bulkWaiters: Waiter[] = [];
  private bulkBusy = 0;
  private readonly drain = new DrainMeter();
  private maxQueueWaitMs = Number.POSITIVE_INFINITY;
  /** Bulk leases by owner (the client's key): one client's extracts never take every bulk connection. */
  private readonly bulkByOwner = new Map<string, number>();
  private closed = false;
  private background: DuckDBConnection | null = null;
  /** How long a request asking for a connection held it lately (ms; a quarter for the last one), null before any gave one back. */
  private turnMs: number | null = null;

  private constructor(
    private readonly instance: DuckDBInstance,
    readonly size: number,
    private readonly maxQueued: number,
  ) {}

  static async create(o: EngineOptions): Promise<Engine> {
    mkdirSync(o.tempDir, { recursive: true });
    const instance = await DuckDBInstance.create(':memory:', {
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
    });
    const setup = await instance.connect();
    for (const statement of lockdownStatements(o)) await setup.run(statement);
    setup.closeSync();
    const engine = new Engine(instance, Math.max(1, o.connections), Math.max(0, o.maxQueued));
    engine.maxQueueWaitMs = o.maxQueueWaitMs ?? engine.maxQueueWaitMs;
    for (let i = 0; i < engine.size; i++) engine.idle.push(await instance.connect());
    return engine;
  }

  /** Connections currently handed out: 0 when every request has returned its own. */
  get busy(): number {
    return this.size - this.idle.length;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  get queued(): number {
    return this.waiters.length;
  }

  /** Streaming extracts waiting for a connection to write their next group. */
  get queuedBulk(): number {
    return this.bulkWaiters.length;
  }

  async acquire(signal?: AbortSignal): Promise<Lease> {
    if (this.closed) throw new EngineClosedError();
    const idle = this.idle.pop();
    if (idle) return this.handOut(idle);
    if (this.queueFull()) throw this.refuse();
    return this.handOut(await this.wait(this.waiters, null, signal));
  }
  /**
   * True when a request that needs a connection now would be refused: none idle and the queue full.
   * Checked before any preflight work, so a refusal under overload costs next to nothing.
   */
  get saturated(): boolean {
    return !this.closed && this.idle.length === 0 && this.queueFull();
  }

  /**
   * Full by count (`maxQueued`), or by time: with requests already waiting, one more would wait
   * longer than `maxQueueWaitMs` at the pace they are served now. Closed-loop clients refused at
   * once come straight back, and answering them takes the time the queued ones need: a queue
   * bounded by time keeps the goodput where a short one let it collapse (measured: docs/performance.md).
   */
  private queueFull(): boolean {
    if (this.waiters.length >= this.maxQueued) return true;
    if (this.waiters.length === 0) return false;
    const waitMs = this.drain.msToDrain(this.waiters.length + 1, Date.now());
    return waitMs !== null && waitMs > this.maxQueueWaitMs;
  }

  /**
   * How long a request asking for a connection now should take to be answered: the requests queued
   * ahead of it, then its own turn, at the recent length of a turn on a connection shared by `size`
   * connections. 0 when a connection is idle and nobody waits (it starts at once); null when no
   * turn has been timed yet.
   */
  answerMs(): number | null {
    if (this.waiters.length === 0 && this.idle.length > 0) return 0;
    return this.turnMs === null ? null : (this.turnMs * (this.waiters.length + this.size)) / this.size;
  }

  /** The queue-full refusal, with how long the requests waiting now should take to be served. */
  refuse(): EngineBusyError {
    return new EngineBusyError(this.drain.secondsToDrain(this.waiters.length + 1, Date.now()));
  }

  /** A connection given to a request that asked for one: the pace the queue drains at. */
  private handOut(connection: DuckDBConnection): Lease {
    this.drain.record(Date.now());
    return this.lease(connection, null, true);
  }

  private timeTurn(ms: number): void {
    this.turnMs = this.turnMs === null ? ms : this.turnMs + (ms - this.turnMs) / 4;
  }

  /** A connection only if one is idle and nobody is waiting: extra parallelism never delays another request. */
  tryAcquire(): Lease | null {
    if (this.closed || this.waiters.length > 0) return null;
    const connection = this.idle.pop();
    return connection ? this.lease(connection, null) : null;
  }

  /** An idle connection for a group of `owner`'s streaming extract, within the bulk priority's shares, or null. */
  tryAcquireBulk(owner: string): Lease | null {
    if (this.closed || this.waiters.length > 0 || !this.bulkMayTake(owner)) return null;
    const connection = this.idle.pop();
    if (!connection) return null;
    this.countBulk(owner, 1);
    return this.lease(connection, owner);
  }

  /** A connection for the next group of `owner`'s streaming extract: waits behind every interactive request, never refused. */
  async acquireBulk(owner: string, signal?: AbortSignal): Promise<Lease> {
    if (this.closed) throw new EngineClosedError();
    return this.tryAcquireBulk(owner) ?? this.lease(await this.wait(this.bulkWaiters, owner, signal), owner);
  }

  /**
   * Bulk work leaves one connection (when there are two or more) to requests before their first
   * byte, and one owner leaves one of the bulk connections (when there are two or more) to others.
   */
  private bulkMayTake(owner: string): boolean {
    const share = Math.max(1, this.size - 1);
    return this.bulkBusy < share && (this.bulkByOwner.get(owner) ?? 0) < Math.max(1, share - 1);
  }

  private countBulk(owner: string, delta: number): void {
    this.bulkBusy += delta;
    const n = (this.bulkByOwner.get(owner) ?? 0) + delta;
    if (n > 0) this.bulkByOwner.set(owner, n);
    else this.bulkByOwner.delete(owner);
  }

  /**
   * `owner`: a bulk lease, counted by whoever handed it out (tryAcquireBulk, giveBack); null:
   * interactive. `timed`: a request's turn, which answerMs() goes by.
   */
  private lease(connection: DuckDBConnection, owner: string | null, timed = false): Lease {
    let released = false;
    const started = timed ? performance.now() : 0;
    return {
      connection,
      release: () => {
        if (released) return;
        released = true;
        if (timed) this.timeTurn(performance.now() - started);
        if (owner !== null) this.countBulk(owner, -1);
        this.giveBack(connection);
      },
    };
  }

  private wait(queue: Waiter[], owner: string | null, signal?: AbortSignal): Promise<DuckDBConnection> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        owner,
        wake: (c) => {
          signal?.removeEventListener('abort', onAbort);
          if (c) resolve(c);
          else reject(new EngineClosedError());
        },
      };
      const onAbort = () => {
        const i = queue.indexOf(waiter);
        if (i >= 0) queue.splice(i, 1);
        reject(signal?.reason ?? new DOMException('aborted', 'AbortError'));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(waiter);
    });
  }

  /** Interactive waiters first; a bulk waiter only within the bulk priority's share. */
  private giveBack(c: DuckDBConnection): void {
    if (this.closed) return;
    const interactive = this.waiters.shift();
    if (interactive) return interactive.wake(c);
    const i = this.bulkWaiters.findIndex((w) => this.bulkMayTake(w.owner!));
    if (i < 0) return void this.idle.push(c);
    const [bulk] = this.bulkWaiters.splice(i, 1);
    // Counted at hand-off, not when the waiter wakes: a second release in the same tick must see it.
    this.countBulk(bulk!.owner!, 1);
    bulk!.wake(c);
  }

  /**
   * One connection outside the pool for background work (rendering files): it never holds a
   * connection a request could have, and runs one statement at a time.
   */
  async backgroundConnection(): Promise<DuckDBConnection> {
    if (this.closed) throw new Error('the engine is closed');
    return (this.background ??= await this.instance.connect());
  }

  close(): void {
    this.closed = true;
    // Like a leased connection, it is interrupted, not closed: a statement may still run on it.
    this.background?.interrupt();
    // Nobody waiting for a connection is left hanging once the engine is gone.
    for (const waiter of [...this.waiters.splice(0), ...this.bulkWaiters.splice(0)]) waiter.wake(null);
    for (const c of this.idle.splice(0)) c.closeSync();
    this.instance.closeSync();
  }
}
