import type { DuckDBConnection } from '@duckdb/node-api';
import type { Engine, Lease } from './engine.ts';

/** The connection of one request: leased on first use, interrupted when the request is aborted. */
export interface RequestConnection {
  connection(): Promise<DuckDBConnection>;
  /** Whether a connection has been asked for (and is held, or being waited for). */
  readonly held: boolean;
  /** Stops interrupting and gives the connection back (if one was leased); idempotent. */
  release(): void;
}

/**
 * The connection is taken only when something needs DuckDB: a request answered from cached checks
 * (304) or cached rows never waits for one.
 */
export function requestConnection(engine: Engine, signal: AbortSignal): RequestConnection {
  let lease: Lease | null = null;
  let leasing: Promise<Lease> | null = null;
  let done = false;
  const interrupt = () => {
    if (!done) lease?.connection.interrupt();
  };
  signal.addEventListener('abort', interrupt);
  return {
    connection: async () => {
      leasing ??= engine.acquire(signal).then((l) => (lease = l));
      return (await leasing).connection;
    },
    get held() {
      return leasing !== null && !done;
    },
    release: () => {
      done = true;
      signal.removeEventListener('abort', interrupt);
      lease?.release();
    },
  };
}

/** Up to `wanted` idle connections, never waiting: extra parallelism for one request. */
function idleHelpers(engine: Engine, wanted: number): Lease[] {
  const helpers: Lease[] = [];
  while (helpers.length < wanted) {
    const helper = engine.tryAcquire();
    if (!helper) break;
    helpers.push(helper);
  }
  return helpers;
}

/**
 * The one fan-out of a request over idle connections: `run` gets the request's own connection and
 * up to `most` − 1 idle ones borrowed for it (never waited for). The borrowed ones are interrupted
 * when the request is aborted (its own is, by whoever holds it) and given back once `run` has
 * ended, so `run` must await all its work on them: none is mid-statement then.
 */
export async function withIdleHelpers<T>(engine: Engine, own: DuckDBConnection, most: number, signal: AbortSignal, run: (connections: readonly DuckDBConnection[]) => Promise<T>): Promise<T> {
  const helpers = idleHelpers(engine, most - 1);
  const interrupt = () => helpers.forEach((h) => h.connection.interrupt());
  signal.addEventListener('abort', interrupt);
  try {
    return await run([own, ...helpers.map((h) => h.connection)]);
  } finally {
    signal.removeEventListener('abort', interrupt);
    helpers.forEach((h) => h.release());
  }
}

/**
 * Work on several connections side by side (`work(c, i)` for each): the first to fail interrupts
 * the others' connections (their work is wasted), and its error is thrown once every one has
 * ended; else the results in order. `work` may turn a failure it expects into a result.
 */
export async function sideBySide<T>(connections: readonly DuckDBConnection[], count: number, work: (c: DuckDBConnection, i: number) => Promise<T>): Promise<T[]> {
  let cause: { error: unknown } | null = null;
  const settled = await Promise.allSettled(
    Array.from({ length: count }, (_, i) =>
      work(connections[i]!, i).catch((e: unknown) => {
        if (!cause) connections.forEach((other, j) => j !== i && other.interrupt());
        cause ??= { error: e };
        throw e;
      }),
    ),
  );
  if (cause) throw (cause as { error: unknown }).error;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}
