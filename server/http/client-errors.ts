import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { problemBody, type ProblemKind } from './problems.ts';

type RawProblem = Extract<ProblemKind, 'request-timeout' | 'headers-too-large' | 'malformed-request' | 'not-found'>;

const ANSWERS: Record<RawProblem, { reason: string; detail: string }> = {
  'request-timeout': { reason: 'Request Timeout', detail: 'The request did not arrive completely within the time limit.' },
  'headers-too-large': { reason: 'Request Header Fields Too Large', detail: 'The request line and headers are larger than the server accepts.' },
  'malformed-request': { reason: 'Bad Request', detail: 'The request is not valid HTTP/1.1 (request line or headers).' },
  'not-found': { reason: 'Not Found', detail: 'No such resource: this server answers GET and HEAD only, and is not a proxy (CONNECT).' },
};

/**
 * A problem written straight to a socket Fastify never sees, then the connection closed. Neither
 * the packet nor the error is logged in full: the raw packet holds the request's headers, the key
 * among them.
 */
function answerOnSocket(app: FastifyInstance, socket: Duplex, kind: RawProblem, code: string | undefined): void {
  const requestId = `conn-${randomBytes(4).toString('hex')}`;
  const { status, body } = problemBody(kind, ANSWERS[kind].detail, '', requestId);
  app.log.info({ code, status, requestId }, 'request rejected before routing');
  if (socket.writable) {
    const text = JSON.stringify(body);
    socket.write(`HTTP/1.1 ${status} ${ANSWERS[kind].reason}\r\nContent-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
  }
  // Flushed, then closed whatever the client does (Node's socket is a net.Socket behind the Duplex type).
  (socket as Socket).destroySoon();
}

/**
 * Node's HTTP parser rejects some requests before Fastify sees them (a header section over the
 * limit, a control byte, an unknown method, Transfer-Encoding with Content-Length) and times out
 * requests that never finish arriving. They get a problem body like every other error; the
 * connection is closed after it, as Node does.
 */
export function answerClientError(this: FastifyInstance, error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const kind: RawProblem = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request-timeout' : error.code === 'HPE_HEADER_OVERFLOW' ? 'headers-too-large' : 'malformed-request';
  answerOnSocket(this, socket, kind, error.code);
}

/**
 * CONNECT (an authority-form target) is handed by Node to a `connect` listener, never to the
 * routes; without one the connection closed with no answer at all. Like any method other than
 * GET and HEAD it is a 404 problem; whatever the client sent after it is never read.
 */
export function answerConnect(app: FastifyInstance): void {
  app.server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    answerOnSocket(app, socket, 'not-found', 'CONNECT');
  });
}

/**
 * An `Expect` other than `100-continue` is answered as if the request had none (RFC 9110 §10.1.1
 * lets a server ignore an expectation it does not know); Node would send a bare 417 of its own,
 * with no body, outside every rule of this service.
 */
export function ignoreUnknownExpectations(app: FastifyInstance): void {
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => app.server.emit('request', request, response));
}

