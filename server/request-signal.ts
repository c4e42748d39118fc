import type { FastifyReply } from 'fastify';
import { DataParameterError, DatasetUnavailableError } from '../queries/errors.ts';
import { Problem } from './problems.ts';

/** Aborts when the client goes away before the response is complete, or when the query time budget is spent. */
export function requestSignal(reply: FastifyReply, timeoutMs: number): AbortSignal {
  const gone = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) gone.abort(new Error('client closed the connection'));
  });
  return AbortSignal.any([gone.signal, AbortSignal.timeout(timeoutMs)]);
}

/** Maps a preflight failure to the problem the client sees: nothing from the engine or the disk leaks. */
export function toProblem(e: unknown, retryAfterSeconds: number): Problem {
  if (e instanceof Problem) return e;
  if (e instanceof DataParameterError) return new Problem('invalid-parameter', e.message, [{ parameter: e.parameter, message: e.message }]);
  const retry = { 'retry-after': String(retryAfterSeconds) };
  if (e instanceof DatasetUnavailableError) {
    const p = new Problem('unavailable', `The ${e.dataset} data could not be read, so the service did not look. Retry later.`, undefined, retry);
    return Object.assign(p, { cause: e });
  }
  const timedOut = e instanceof DOMException && e.name === 'TimeoutError';
  const detail = timedOut ? 'The query did not finish within the time limit, so the service did not look.' : 'The data could not be read, so the service did not look.';
  return Object.assign(new Problem('unavailable', detail, undefined, retry), { cause: e });
}
