import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractChecker } from '../../openapi/contract-checker.ts';
import { rawExchange } from '../../helpers/raw-http.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let checker: ContractChecker;
const REQUEST_TIMEOUT_MS = 1000;

beforeAll(async () => {
  server = await startServer(await writeSampleData(), { REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) });
  checker = await ContractChecker.create(await (await fetch(`${server.url}/api/v1/docs`)).json());
});
afterAll(() => server.close());

const head = (requestLine: string, headers: string[] = []) => `${requestLine}\r\nHost: localhost\r\n${[...headers, 'Connection: close'].map((h) => `${h}\r\n`).join('')}\r\n`;

/** A documented problem+json body of the given kind, whatever the status line says. */
function expectProblem(answer: { status: number; headers: Record<string, string>; body: string }, status: number, kind: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(JSON.parse(answer.body)).toMatchObject({ type: `/api/v1/docs#problem-${kind}`, status });
  expect(checker.checkProblem(answer.body)).toEqual([]);
}

describe('a request that never arrives completely is answered within REQUEST_TIMEOUT_MS', () => {
  it('DELETE announcing 10 bytes of JSON and sending 3: 408 problem+json and a closed connection within a few seconds, not never', async () => {
    const answer = await rawExchange(server.url, head('DELETE /api/v1/hotspots HTTP/1.1', [`Authorization: Bearer ${server.key}`, 'Content-Type: application/json', 'Content-Length: 10']) + '{"a', 15_000);
    // Answered, and not never: rawExchange gives up after 15 s (how late past REQUEST_TIMEOUT_MS depends on the machine's load).
    expectProblem(answer, 408, 'request-timeout');
  }, 20_000);

  it('headers that stop half-way: 408 too', async () => {
    const answer = await rawExchange(server.url, 'GET /api/v1/hotspots HTTP/1.1\r\nHost: localhost\r\nX-Slow: a', 15_000);
    expectProblem(answer, 408, 'request-timeout');
  }, 20_000);
});

describe("errors from Node's HTTP parser are problem+json like every other error", () => {
  it.each([
    ['a 100 kB URL', head(`GET /api/v1/hotspots?x=${'a'.repeat(100_000)} HTTP/1.1`), 431, 'headers-too-large'],
    ['a 64 kB Authorization header', head('GET /api/v1/hotspots HTTP/1.1', [`Authorization: Bearer ${'a'.repeat(64 * 1024)}`]), 431, 'headers-too-large'],
    ['a control byte in a header', head('GET /api/v1/hotspots HTTP/1.1', ['X-Bad: a\u0001b']), 400, 'malformed-request'],
    ['a lowercase method', head('get /api/v1/hotspots HTTP/1.1'), 400, 'malformed-request'],
    ['Transfer-Encoding with Content-Length', head('POST /api/v1/hotspots HTTP/1.1', ['Transfer-Encoding: chunked', 'Content-Length: 5']) + '0\r\n\r\n', 400, 'malformed-request'],
  ])('%s: %i %s', async (_name, bytes, status, kind) => {
    expectProblem(await rawExchange(server.url, bytes), status, kind);
  });
});

describe('a method other than GET or HEAD on a data path is the documented 404, whatever its body', () => {
  const auth = `Authorization: Bearer ${'x'}`;
  it.each([
    ['QUERY without a content type', head('QUERY /api/v1/hotspots HTTP/1.1', [auth])],
    ['QUERY with a body', head('QUERY /api/v1/hotspots HTTP/1.1', [auth, 'Content-Type: application/json', 'Content-Length: 2']) + '{}'],
    ['POST with a 2 MB JSON body', head('POST /api/v1/hotspots HTTP/1.1', [auth, 'Content-Type: application/json', `Content-Length: ${2 * 1024 * 1024}`]) + ' '.repeat(2 * 1024 * 1024)],
    ['POST with an unknown content type', head('POST /api/v1/hotspots HTTP/1.1', [auth, 'Content-Type: foo/bar', 'Content-Length: 1']) + 'x'],
    ['POST with an invalid content type', head('POST /api/v1/hotspots HTTP/1.1', [auth, 'Content-Type: ;;;', 'Content-Length: 1']) + 'x'],
    ['POST with malformed JSON', head('POST /api/v1/hotspots HTTP/1.1', [auth, 'Content-Type: application/json', 'Content-Length: 3']) + '{x}'],
    ['DELETE', head('DELETE /api/v1/hotspots HTTP/1.1', [auth])],
  ])('%s: 404 not-found problem+json', async (_name, bytes) => {
    expectProblem(await rawExchange(server.url, bytes), 404, 'not-found');
  });
});
