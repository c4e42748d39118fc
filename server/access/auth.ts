import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyRegistry } from '../keys/key-registry.ts';
import type { Metrics } from '../metrics.ts';
import { isHtmlShell } from '../ogc/html.ts';
import { Problem } from '../http/problems.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Id of the authenticated key (never the key itself). */
    keyId?: string;
  }
}

const REALM = 'realm="research-read-api"';
/** Both ways a client may send its key; Basic's charset says a password is read as UTF-8 (RFC 7617). */
const BASIC_CHALLENGE = `Basic ${REALM}, charset="UTF-8"`;

/**
 * The key a request presents, from the `Authorization` header only (never the query string):
 * `Bearer <key>`, or HTTP Basic with the key as the password and any user name — what clients
 * that cannot send a bearer header offer (QGIS's Basic method, GDAL_HTTP_USERPWD, curl -u, R).
 */
export function presentedKey(header: string | undefined): string | null {
  if (header === undefined) return null;
  const bearer = /^Bearer +(\S+) *$/i.exec(header);
  if (bearer) return bearer[1]!;
  const basic = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!basic) return null;
  const credentials = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = credentials.indexOf(':');
  const password = colon < 0 ? '' : credentials.slice(colon + 1);
  return password === '' ? null : password;
}

/**
 * Fails closed: the key hook lets a request through without a key only for a page shell, so data
 * asked for without a verified key means a route forgot to answer with its shell. A 500, never data.
 */
export function keyedOnly(request: FastifyRequest): void {
  if (request.keyId === undefined) throw new Error(`${request.routeOptions.url ?? 'route'}: data asked for without a verified key`);
}

/** Answers whether this client address may still fail authentication; throws the 429 when it may not. */
export type FailureGate = (request: FastifyRequest) => Promise<void>;

/**
 * onRequest hook of every data route. Missing and invalid keys get the same 401 body whatever the
 * reason (malformed, unknown id, wrong secret), so the answer reveals no more than the spec's 401/403.
 */
export function authenticate(registry: KeyRegistry, failureGate: FailureGate, metrics: Metrics) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    // A page shell holds no data: the page asks for the data itself, with the key.
    if (isHtmlShell(request)) return;
    const token = presentedKey(request.headers.authorization);
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
    const challenge = `Bearer ${REALM}${token === null ? '' : ', error="invalid_token"'}, ${BASIC_CHALLENGE}`;
    const detail = token === null ? 'Send your key as Authorization: Bearer <key>, or as the password of HTTP Basic authentication (any user name).' : 'The key is not valid.';
    throw new Problem('unauthorized', detail, undefined, { 'www-authenticate': challenge });
  };
}
