import type { FastifyReply, FastifyRequest } from 'fastify';

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

/** The RFC 9457 body of a problem, and its status. */
export function problemBody(kind: ProblemKind, detail: string, instance: string, requestId: string, errors?: ParameterError[]) {
  const { status, title } = PROBLEM_KINDS[kind];
  return { status, body: { type: problemType(kind), title, status, detail, instance, requestId, ...(errors ? { errors } : {}) } };
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, p: Problem): FastifyReply {
  const { status, body } = problemBody(p.kind, p.detail, request.url.split('?')[0] ?? '', request.id, p.errors);
  return reply.code(status).headers(p.headers).type('application/problem+json').send(body);
}
