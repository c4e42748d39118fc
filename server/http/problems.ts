import type { FastifyReply, FastifyRequest } from 'fastify';
import { CorrectionsUnavailableError, DataParameterError, DatasetUnavailableError, EngineBusyError, isOutOfEngineMemory, isOutOfTempSpace, isUnreadableData, ResponseTooLargeError, TempBudgetFullError, wasStopped } from '../../queries/errors.ts';

export const PROBLEM_KINDS = {
  'invalid-parameter': { status: 400, title: 'Invalid request parameter' },
  unauthorized: { status: 401, title: 'A valid key is required' },
  forbidden: { status: 403, title: 'Key revoked or expired' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'malformed-request': { status: 400, title: 'Malformed request' },
  'request-timeout': { status: 408, title: 'Request not received in time' },
  'headers-too-large': { status: 431, title: 'Request headers too large' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  unavailable: { status: 503, title: 'Data not available: the service did not look' },
  internal: { status: 500, title: 'Internal error' },
} as const;

export type ProblemKind = keyof typeof PROBLEM_KINDS;

export interface ParameterError {
  parameter: string;
  message: string;
}

/** An error that becomes an RFC 9457 problem response; `detail` is safe to show (no SQL, paths or engine text). */
export class Problem extends Error {
  constructor(
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly errors?: ParameterError[],
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

/** Errors listed one by one; beyond these a count, so thousands of bad parameters cannot make a huge body. */
export const LISTED_PARAMETER_ERRORS = 10;

export function invalidParameters(errors: ParameterError[]): Problem {
  const listed = errors.slice(0, LISTED_PARAMETER_ERRORS);
  const more = errors.length - listed.length;
  const detail = listed.map((e) => `${e.parameter}: ${e.message}`).join('; ');
  return new Problem('invalid-parameter', more > 0 ? `${detail}; and ${more} more parameter errors not listed` : detail, listed);
}

/** The stable `type` URI of a problem kind: a fragment of the service's own documentation. */
export const problemType = (kind: ProblemKind): string => `/api/v1/docs#problem-${kind}`;

/**
 * The RFC 9457 body of a problem, and its status. `code` is the kind's short name: OGC API –
 * Features 1.0's exception schema requires it, and it lets a client branch without parsing `type`.
 */
export function problemBody(kind: ProblemKind, detail: string, instance: string, requestId: string, errors?: ParameterError[]) {
  const { status, title } = PROBLEM_KINDS[kind];
  return { status, body: { type: problemType(kind), title, status, detail, instance, requestId, code: kind, ...(errors ? { errors } : {}) } };
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, p: Problem): FastifyReply {
  // Only a path is this server's resource: an absolute-form target (refused) or `*` is not echoed.
  const instance = request.url.startsWith('/') ? (request.url.split('?')[0] ?? '') : '';
  const { status, body } = problemBody(p.kind, p.detail, instance, request.id, p.errors);
  return reply.code(status).headers(p.headers).type('application/problem+json').send(body);
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
  if (e instanceof ResponseTooLargeError) {
    const detail = 'This response is too large to be written whole before it is sent, as it must be for an HTTP/1.0 request (a proxy speaking HTTP/1.0 to the service included). Narrow the window (from, to) or use HTTP/1.1.';
    return new Problem('unavailable', detail, undefined, retry);
  }
  if (e instanceof CorrectionsUnavailableError) {
    const detail = `A correction model of ${e.dataset} cannot be read or is invalid, so the service did not look at the corrected series. The raw series (series=raw) is not affected. Retry later.`;
    return Object.assign(new Problem('unavailable', detail, undefined, retry), { cause: e });
  }
  if (e instanceof DatasetUnavailableError) {
    const p = new Problem('unavailable', `The ${e.dataset} data could not be read, so the service did not look. Retry later.`, undefined, retry);
    return Object.assign(p, { cause: e });
  }
  if (isOutOfTempSpace(e)) {
    const p = new Problem('unavailable', 'The server ran out of temporary space for this response, so the service did not look. Retry later.', undefined, retry);
    return Object.assign(p, { cause: e });
  }
  const detail = wasStopped(e)
    ? 'The query did not finish within the time limit, so the service did not look.'
    : isOutOfEngineMemory(e)
      ? 'The service is at capacity, so it did not look. Retry later.'
      : isUnreadableData(e)
        ? 'The data could not be read, so the service did not look.'
        : null;
  // Anything else is a bug, not unreadable data: a 500 without Retry-After, logged with its stack and counted.
  if (detail === null) throw e;
  return Object.assign(new Problem('unavailable', detail, undefined, retry), { cause: e });
}

/**
 * A queue-full refusal, held for `holdMs` (at most the time the queue takes to drain) before it is
 * sent, with Retry-After counted from the moment it is sent. Under overload, clients that come
 * straight back after a 503 (scripts, load generators, retry loops without backoff) otherwise
 * make refusals the server's main work: thousands a second took the cores from the requests being
 * served (the bench's overload scenario at 1,000 connections: 2 req/s of 200s at once, 60 req/s with a 2 s hold).
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
