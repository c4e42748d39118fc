import type { FastifyReply } from 'fastify';
import { EngineBusyError } from '../queries/engine.ts';
import { DataParameterError, DatasetUnavailableError, isOutOfTempSpace } from '../queries/errors.ts';
import { Problem } from './problems.ts';

/**
 * Aborts when the client goes away before the response is complete, or when the request's time
 * budget is spent. Once the body has started, spending the budget destroys the response too: a
 * client that stops reading must not keep DuckDB connections and temp files forever.
 */
export function requestSignal(reply: FastifyReply, timeoutMs: number): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(() => {
    controller.abort(new DOMException('request time budget spent', 'TimeoutError'));
    if (reply.raw.headersSent && !reply.raw.writableFinished) reply.raw.destroy();
  }, timeoutMs);
  reply.raw.once('close', () => {
    clearTimeout(timer);
    if (!reply.raw.writableFinished) controller.abort(new Error('client closed the connection'));
  });
  return controller.signal;
}

/** Maps a preflight failure to the problem the client sees: nothing from the engine or the disk leaks. */
export function toProblem(e: unknown, retryAfterSeconds: number): Problem {
  if (e instanceof Problem) return e;
  if (e instanceof DataParameterError) return new Problem('invalid-parameter', e.message, [{ parameter: e.parameter, message: e.message }]);
  const retry = { 'retry-after': String(retryAfterSeconds) };
  if (e instanceof EngineBusyError) return new Problem('unavailable', 'The service is at capacity, so it did not look. Retry later.', undefined, retry);
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
