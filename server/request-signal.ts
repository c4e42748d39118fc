import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { EngineBudget } from '../queries/engine/budget.ts';
import { EngineBusyError } from '../queries/engine/engine.ts';
import { DataParameterError, DatasetUnavailableError, isOutOfTempSpace } from '../queries/errors.ts';
import { TempBudgetFullError } from '../queries/engine/temp-budget.ts';
import { Problem } from './problems.ts';

export interface RequestLimits {
  /** Engine time the request may take: planning and counting, then writing its groups. */
  queryTimeoutMs: number;
  /** Time a started download may go without its client taking a byte. */
  sendIdleTimeoutMs: number;
}

export interface RequestSignal {
  /** Aborted when the client goes away, the engine budget is spent, or the client stops reading. */
  signal: AbortSignal;
  /** Marks the engine working for this request; returns the stop. */
  engineWork(): () => void;
  /** The preflight is over: from now on the budget runs only while groups are written. */
  preflightDone(): void;
}

/**
 * The one way a request is stopped: its signal aborts, and once the body has started the response
 * is destroyed too (the client sees a broken transfer). QUERY_TIMEOUT_MS counts the engine's work
 * only, so a steady slow reader finishes whatever the size; a client that takes nothing for
 * SEND_IDLE_TIMEOUT_MS is cut, so it cannot keep temp files forever.
 */
export function requestSignal(reply: FastifyReply, limits: RequestLimits): RequestSignal {
  const controller = new AbortController();
  const cut = (reason: DOMException) => {
    controller.abort(reason);
    if (reply.raw.headersSent && !reply.raw.writableFinished) reply.raw.destroy();
  };
  const budget = new EngineBudget(limits.queryTimeoutMs, () => cut(new DOMException('request time budget spent', 'TimeoutError')));
  const preflight = budget.run();
  const stopWatching = watchSendProgress(reply.raw, limits.sendIdleTimeoutMs, () => cut(new DOMException('client took nothing for too long', 'TimeoutError')));
  reply.raw.once('close', () => {
    budget.close();
    stopWatching();
    if (!reply.raw.writableFinished) controller.abort(new Error('client closed the connection'));
  });
  return { signal: controller.signal, engineWork: () => budget.run(), preflightDone: preflight };
}

/**
 * Calls `onStall` when the response has bytes waiting for the client (backpressure) and the client
 * has taken none for `idleMs`. A response waiting for the engine is not stalled: that is the
 * engine budget's business.
 */
function watchSendProgress(res: ServerResponse, idleMs: number, onStall: () => void): () => void {
  let lastProgress = performance.now();
  const progress = () => (lastProgress = performance.now());
  res.on('drain', progress);
  const timer = setInterval(() => {
    if (!res.headersSent || !res.writableNeedDrain) progress();
    else if (performance.now() - lastProgress >= idleMs) onStall();
  }, Math.max(10, Math.min(1000, idleMs / 4)));
  timer.unref();
  return () => {
    clearInterval(timer);
    res.off('drain', progress);
  };
}

/** Maps a preflight failure to the problem the client sees: nothing from the engine or the disk leaks. */
export function toProblem(e: unknown, retryAfterSeconds: number): Problem {
  if (e instanceof Problem) return e;
  if (e instanceof DataParameterError) return new Problem('invalid-parameter', e.message, [{ parameter: e.parameter, message: e.message }]);
  if (e instanceof EngineBusyError) return atCapacity(e, retryAfterSeconds);
  const retry = { 'retry-after': String(retryAfterSeconds) };
  if (e instanceof TempBudgetFullError) {
    return new Problem('unavailable', 'The service is at capacity, so it did not look. Retry later.', undefined, { 'retry-after': String(e.retryAfterSeconds) });
  }
  if (e instanceof DatasetUnavailableError) {
    const p = new Problem('unavailable', `The ${e.dataset} data could not be read, so the service did not look. Retry later.`, undefined, retry);
    return Object.assign(p, { cause: e });
  }
  if (isOutOfTempSpace(e)) {
    const p = new Problem('unavailable', 'The server ran out of temporary space for this response, so the service did not look. Retry later.', undefined, retry);
    return Object.assign(p, { cause: e });
  }
  const timedOut = e instanceof DOMException && e.name === 'TimeoutError';
  const detail = timedOut ? 'The query did not finish within the time limit, so the service did not look.' : 'The data could not be read, so the service did not look.';
  // The engine's own complaints about a statement are bugs (500), not unreadable data (503).
  if (!timedOut && /^(Binder|Parser|Catalog|Not implemented) Error/.test((e as Error)?.message ?? '')) throw e;
  return Object.assign(new Problem('unavailable', detail, undefined, retry), { cause: e });
}

/**
 * A queue-full refusal, held for `holdMs` (at most the time the queue takes to drain) before it is
 * sent, with Retry-After counted from the moment it is sent. Under overload, clients that come
 * straight back after a 503 (scripts, load generators, retry loops without backoff) otherwise
 * make refusals the server's main work: thousands a second took the cores from the requests being
 * served (bench row 11 at 1,000 connections: 2 req/s of 200s at once, 60 req/s with a 2 s hold).
 * A held refusal costs a timer and an open socket; no connection, file or temp space is taken.
 */
export async function heldRefusal(e: EngineBusyError, holdMs: number, retryAfterSeconds: number): Promise<Problem> {
  const hold = e.drainSeconds === null ? holdMs : Math.min(holdMs, e.drainSeconds * 1000);
  if (hold > 0) await new Promise((resolve) => setTimeout(resolve, hold).unref());
  return atCapacity(e.drainSeconds === null ? e : new EngineBusyError(Math.ceil(e.drainSeconds - hold / 1000)), retryAfterSeconds);
}

/**
 * The queue-full 503. `Retry-After` is the time the queue in front of the client takes to drain at
 * the pace measured just now, at most `RETRY_AFTER_SECONDS`, which is also the answer when no
 * request was served lately (no pace to go by).
 */
export function atCapacity(e: EngineBusyError, retryAfterSeconds: number): Problem {
  const seconds = e.drainSeconds === null ? retryAfterSeconds : Math.min(retryAfterSeconds, Math.max(1, e.drainSeconds));
  const p = new Problem('unavailable', 'The service is at capacity, so it did not look. Retry later.', undefined, { 'retry-after': String(seconds) });
  return Object.assign(p, { cause: e });
}
