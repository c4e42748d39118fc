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
export function idleHelpers(engine: Engine, wanted: number): Lease[] {
  const helpers: Lease[] = [];
  while (helpers.length < wanted) {
    const helper = engine.tryAcquire();
    if (!helper) break;
    helpers.push(helper);
  }
  return helpers;
}
