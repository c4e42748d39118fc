/** Errors of the extract client. Only `TransferError` and retryable `HttpStatusError`s are retried. */

/** A problem the user can act on: printed as one line, exit code 1. */
export class ClientError extends Error {}

/** The connection failed or the body ended early (the server aborts a stream it cannot finish). */
export class TransferError extends ClientError {}

/** The server answered with something the contract rules out; retrying cannot help. */
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
