/** Errors of the extract client. Only `TransferError` and retryable `HttpStatusError`s are retried. */

/** A problem the user can act on: printed as one line, exit code 1. */
export class ClientError extends Error {}

/**
 * The connection failed or the body was cut: broken off (a reset, short of its Content-Length or
 * inside its chunks) or ended early however it was framed (inside a CSV record, before the end of
 * a GeoJSON document or a Parquet footer, short of X-Returned where the body may be a prefix). The
 * server aborts a stream it cannot finish, and a proxy may end a cut answer as if it were whole.
 */
export class TransferError extends ClientError {}

/** A server that answered completely answered something the contract rules out; retrying cannot help. */
export class ProtocolError extends ClientError {}

/** A non-200 answer, with what the problem body and `Retry-After` said. */
export class HttpStatusError extends ClientError {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly retryAfterSeconds: number | null,
  ) {
    super(`HTTP ${status}: ${detail}`);
  }
}

/** 429 is flow control, 503 means "did not look, try later"; 500/502/504 may be a proxy or a restart. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

export const isRetryable = (e: unknown): boolean =>
  e instanceof TransferError || (e instanceof HttpStatusError && RETRYABLE_STATUSES.has(e.status));

/** `1 row`, `2 rows`: counts in messages read as a person would write them. */
export const counted = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;
