import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { problemBody, type ProblemKind } from './problems.ts';

type ParserProblem = Extract<ProblemKind, 'request-timeout' | 'headers-too-large' | 'malformed-request'>;

const ANSWERS: Record<ParserProblem, { reason: string; detail: string }> = {
  'request-timeout': { reason: 'Request Timeout', detail: 'The request did not arrive completely within the time limit.' },
  'headers-too-large': { reason: 'Request Header Fields Too Large', detail: 'The request line and headers are larger than the server accepts.' },
  'malformed-request': { reason: 'Bad Request', detail: 'The request is not valid HTTP/1.1 (request line or headers).' },
};

/**
 * Node's HTTP parser rejects some requests before Fastify sees them (a header section over the
 * limit, a control byte, an unknown method, Transfer-Encoding with Content-Length) and times out
 * requests that never finish arriving. They get a problem body like every other error; the
 * connection is closed after it, as Node does. Neither the packet nor the error is logged in full:
 * the raw packet holds the request's headers, the key among them.
 */
export function answerClientError(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const kind: ParserProblem = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request-timeout' : error.code === 'HPE_HEADER_OVERFLOW' ? 'headers-too-large' : 'malformed-request';
  const requestId = `conn-${randomBytes(4).toString('hex')}`;
  const { status, body } = problemBody(kind, ANSWERS[kind].detail, '', requestId);
  this.log.info({ code: error.code, status, requestId }, 'request rejected by the HTTP parser');
  if (socket.writable) {
    const text = JSON.stringify(body);
    socket.write(`HTTP/1.1 ${status} ${ANSWERS[kind].reason}\r\nContent-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
  }
  socket.destroySoon();
}
