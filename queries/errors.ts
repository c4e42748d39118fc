/** The service cannot look at the data (503): missing folder, chain down, unreadable or mismatched file. */
export class DatasetUnavailableError extends Error {
  constructor(readonly dataset: string, readonly reason: string) {
    super(`${dataset}: ${reason}`);
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

/**
 * The disk under TEMP_DIR is full: ENOSPC from Node, or the engine's IO error for a temp file it
 * writes (which names the file: only the kind is kept).
 */
export function isOutOfTempSpace(e: unknown): boolean {
  if ((e as NodeJS.ErrnoException | null)?.code === 'ENOSPC') return true;
  const message = (e as Error | null)?.message ?? '';
  return /No space left on device/i.test(message);
}
