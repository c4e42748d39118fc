import { setTimeout as sleep } from 'node:timers/promises';
import { ClientError, HttpStatusError, isRetryable } from './errors.ts';

export interface RetryPolicy {
  /** Attempts per request, the first included. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 8, baseDelayMs: 1000, maxDelayMs: 120_000 };

export interface RetryNotice {
  attempt: number;
  attempts: number;
  delayMs: number;
  reason: string;
}

/** The error a bounded retry loop ends with; `last` is what the final attempt got. */
export class GaveUpError extends ClientError {
  constructor(
    message: string,
    readonly last: unknown,
  ) {
    super(message);
  }
}

/**
 * 429 carries the exact moment the window reopens, so it is honoured as given. 503 means the data
 * chain is down; its Retry-After is a floor, and exponential backoff keeps a long outage from
 * being hammered. Broken transfers back off exponentially.
 */
export function retryDelayMs(e: unknown, attempt: number, policy: RetryPolicy): number {
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  if (e instanceof HttpStatusError && e.retryAfterSeconds !== null) {
    const toldMs = Math.max(100, e.retryAfterSeconds * 1000);
    return e.status === 429 ? toldMs : Math.max(toldMs, backoff);
  }
  return backoff;
}

export async function withRetries<T>(what: string, policy: RetryPolicy, run: () => Promise<T>, notify: (n: RetryNotice) => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (e) {
      if (!isRetryable(e)) throw e;
      const reason = e instanceof Error ? e.message : String(e);
      if (attempt >= policy.attempts) throw new GaveUpError(`gave up on ${what} after ${attempt} attempts; the last attempt: ${reason}`, e);
      const delayMs = retryDelayMs(e, attempt, policy);
      notify({ attempt, attempts: policy.attempts, delayMs, reason });
      await sleep(delayMs);
    }
  }
}
