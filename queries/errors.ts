/** Every error the query side raises on purpose; server/http/problems.ts maps each to the problem the client sees. */

/** The service cannot look at the data (503): missing folder, chain down, unreadable or mismatched file. */
export class DatasetUnavailableError extends Error {
  constructor(readonly dataset: string, readonly reason: string) {
    super(`${dataset}: ${reason}`);
  }
}

/**
 * A correction model file of the dataset cannot be read or is invalid: the corrected series is
 * unavailable (503), the raw series is not touched.
 */
export class CorrectionsUnavailableError extends Error {
  constructor(readonly dataset: string, readonly failing: readonly { path: string; problem: string }[]) {
    super(`${dataset}: correction models unusable: ${failing.map((f) => `${f.path}: ${f.problem}`).join('; ')}`);
  }
}

/** A parameter whose validity depends on the data (e.g. an unknown model): 400 naming it. */
export class DataParameterError extends Error {
  constructor(readonly parameter: string, message: string) {
    super(message);
  }
}

/** A stream ended with fewer (or more) rows than promised: the response must be aborted, never ended. */
export class StreamIncompleteError extends Error {
  constructor(readonly expected: number, readonly written: number) {
    super(`stream ended after ${written} of ${expected} rows`);
  }
}

/** Every connection is busy and the wait queue is full: the service did not look (503). */
export class EngineBusyError extends Error {
  /**
   * @param drainSeconds whole seconds until the requests waiting now would have been handed a
   *   connection at the pace measured over the last seconds; null when none was handed out lately.
   */
  constructor(readonly drainSeconds: number | null) {
    super('all connections busy and the wait queue is full');
  }
}

/** TEMP_DIR_MAX_MB is spent: the response was refused before its first byte (503). */
export class TempBudgetFullError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('temporary disk budget spent');
  }
}

/** The engine was closed (the server shuts down) while a request waited for a connection or asked for one. */
export class EngineClosedError extends Error {
  constructor() {
    super('engine closed');
  }
}

/** A file whose bytes are not a complete Parquet file (truncated, still being written, not Parquet). */
export class UnreadableFileError extends Error {}

/**
 * A response that must be written whole before it is sent (to a reader that cannot see a chunked
 * transfer break) is larger than all of TEMP_DIR_MAX_MB: it can never be sent that way.
 */
export class ResponseTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super('response larger than the temporary disk budget');
  }
}

/**
 * The disk under TEMP_DIR is full: ENOSPC from Node, or the engine's IO error for a temp file it
 * writes (which names the file: only the kind is kept).
 */
export function isOutOfTempSpace(e: unknown): boolean {
  if ((e as NodeJS.ErrnoException | null)?.code === 'ENOSPC') return true;
  const message = (e as Error | null)?.message ?? '';
  return /No space left on device/i.test(message);
}

/** The engine's complaints about the files it reads: IO, a value it cannot convert, a corrupt page, a file that is not Parquet. */
const ENGINE_READ_ERROR = /^(IO|Conversion|Invalid) Error:|^Invalid Input Error:.*\bfile\b/s;

/**
 * The data could not be read, so the service did not look (503): a file unreadable, vanished or
 * changed under the server, a system call that failed (the disk, a lost mount), the engine's
 * errors on a file, the engine closed by a shutdown. Anything else is a bug (500).
 */
export function isUnreadableData(e: unknown): boolean {
  if (e instanceof DatasetUnavailableError || e instanceof UnreadableFileError || e instanceof StreamIncompleteError || e instanceof EngineClosedError) return true;
  if (typeof (e as NodeJS.ErrnoException | null)?.syscall === 'string') return true;
  return ENGINE_READ_ERROR.test((e as Error | null)?.message ?? '');
}

/** DuckDB reached DUCKDB_MEMORY_LIMIT: the load, not the data and not a bug. */
export const isOutOfEngineMemory = (e: unknown): boolean => /^Out of Memory Error/.test((e as Error | null)?.message ?? '');

/** The request was stopped on purpose (its time budget spent, its client gone): the signal's reason, or the engine's interrupt. */
export function wasStopped(e: unknown): boolean {
  if (e instanceof DOMException) return e.name === 'TimeoutError' || e.name === 'AbortError';
  return /^INTERRUPT Error/.test((e as Error | null)?.message ?? '');
}
