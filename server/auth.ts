import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyRegistry } from './keys/key-registry.ts';
import type { Metrics } from './metrics.ts';
import { Problem } from './problems.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Id of the authenticated key (never the key itself). */
    keyId?: string;
  }
}

const REALM = 'Bearer realm="research-read-api"';

/** The token of an `Authorization: Bearer <token>` header; only that header is ever read. */
export function bearerToken(header: string | undefined): string | null {
  const m = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
  return m?.[1] ?? null;
}

/** Answers whether this client address may still fail authentication; throws the 429 when it may not. */
export type FailureGate = (request: FastifyRequest) => Promise<void>;

/**
 * onRequest hook of every data route. Missing and invalid keys get the same 401 body whatever the
 * reason (malformed, unknown id, wrong secret), so the answer reveals no more than the spec's 401/403.
 */
export function authenticate(registry: KeyRegistry, failureGate: FailureGate, metrics: Metrics) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const token = bearerToken(request.headers.authorization);
    const verdict = token === null ? null : registry.verify(token, Date.now());
    if (verdict?.status === 'valid') {
      request.keyId = verdict.id;
      request.log = reply.log = request.log.child({ keyId: verdict.id });
      return;
    }
    metrics.countAuthFailure(verdict?.status ?? 'missing');
    await failureGate(request);
    if (verdict && verdict.status !== 'unknown') {
      request.log.info({ keyId: verdict.id, status: verdict.status }, 'key refused');
      throw new Problem('forbidden', `This key is ${verdict.status}. Ask the operator for a new one.`);
    }
    const challenge = token === null ? REALM : `${REALM}, error="invalid_token"`;
    const detail = token === null ? 'Send your key as Authorization: Bearer <key>.' : 'The key is not valid.';
    throw new Problem('unauthorized', detail, undefined, { 'www-authenticate': challenge });
  };
}
