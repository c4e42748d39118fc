/** Every error the query side raises on purpose; server/problems.ts maps each to the problem the client sees. */

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
