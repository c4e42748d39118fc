import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { EngineBudget } from '../../queries/engine/budget.ts';

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
    if (!reply.raw.writableFinished) controller.abort(new DOMException('client closed the connection', 'AbortError'));
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
