import { isIPv4, isIPv6 } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Problem } from './problems.ts';

/**
 * Where absolute links point. With `PUBLIC_URL` every link the service writes (OGC links, Link
 * headers, `next` links, the pages' links and commands, the OpenAPI `servers`) is under it,
 * whatever Host, X-Forwarded-* or the listening address say: behind a proxy that rewrites Host
 * or mounts the API under a path, only the operator knows the address readers use. Without it,
 * links are built from the request's own Host, and a Host that is not a valid `host[:port]` is a
 * 400 (RFC 9112 §3.2), never copied into a link (a shared cache would hand such links to everyone).
 */

/** `PUBLIC_URL` as a base to append `/api/v1/...` to: scheme, host, port and path, without a trailing slash. */
export function parsePublicUrl(text: string): string {
  const url = URL.canParse(text) ? new URL(text) : null;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new Error('must be an absolute http or https URL, like https://fire.example.org/data/');
  if (url.username || url.password) throw new Error('must not hold a user name or password');
  if (url.search || url.hash || text.includes('?') || text.includes('#')) throw new Error('must not hold a query or fragment');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

// RFC 3986's reg-name (unreserved and sub-delims) without its percent-encoding, which no client
// sends in Host (a name beyond ASCII travels as punycode) and which would put encoded bytes in links.
const REG_NAME = /^[A-Za-z0-9\-._~!$&'()*+,;=]{1,253}$/;

/** A host as a WHATWG URL keeps it (browsers, Node's fetch): `999.1.1.1` or `0x7f.1` are not the hosts they look like. */
const keptAsIs = (host: string): boolean => URL.canParse(`http://${host}/`) && new URL(`http://${host}/`).hostname === host.toLowerCase();

/**
 * A Host field value as RFC 9112 allows it for an http URI and as URL parsers read it back: a
 * reg-name or IPv4 address, or a bracketed IPv6 address (no zone: RFC 9110 has none), and an
 * optional port of one to five digits up to 65535.
 */
export function isHostValue(value: string): boolean {
  const m = /^(\[[^\]]*\]|[^:[\]]*)(?::(\d{1,5}))?$/.exec(value);
  if (!m) return false;
  const [, host = '', port] = m;
  if (port !== undefined && Number(port) > 65535) return false;
  if (host.startsWith('[')) return !host.includes('%') && isIPv6(host.slice(1, -1));
  return REG_NAME.test(host) && keptAsIs(host);
}

/**
 * The request's target and Host as this server accepts them, or the problem that refuses them:
 * an absolute-form target (what a client sends a proxy; RFC 9112 §3.2.2 asks origin servers to
 * accept it too, but no client sends it to one, and refusing it keeps one source of a link's host), an
 * HTTP/1.1 request without Host, more than one Host, a Host that is not a valid `host[:port]`.
 */
export function refusedTarget(request: FastifyRequest): Problem | null {
  const raw = request.raw;
  if (raw.url !== undefined && !raw.url.startsWith('/') && raw.url !== '*') {
    return new Problem('malformed-request', 'The request target must be a path (origin-form): this server is not a proxy.');
  }
  const hosts = raw.rawHeaders.filter((_v, i) => i % 2 === 0 && raw.rawHeaders[i]!.toLowerCase() === 'host').length;
  if (hosts > 1) return new Problem('malformed-request', 'The request has more than one Host header.');
  const host = raw.headers.host;
  if (host === undefined) return raw.httpVersion === '1.0' ? null : new Problem('malformed-request', 'An HTTP/1.1 request must carry a Host header.');
  if (!isHostValue(host)) return new Problem('malformed-request', 'The Host header is not a valid host[:port] (a name, an IPv4 address or a bracketed IPv6 address).');
  return null;
}

/** Every request's target and Host checked before any route, the 404 handler included; the connection is closed after a refusal. */
export function registerTargetRule(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const refused = refusedTarget(request);
    if (refused) {
      reply.header('connection', 'close');
      throw refused;
    }
  });
}

/** `https` only when the request came over TLS or, with TRUST_PROXY, the proxy says so; anything else a proxy sends is not a scheme of ours. */
const schemeOf = (request: FastifyRequest): string => (request.protocol === 'https' ? 'https' : 'http');

/** The listening address a request without Host reached (HTTP/1.0), as a URI authority. */
function localAuthority(request: FastifyRequest): string {
  const { localAddress = '127.0.0.1', localPort } = request.raw.socket;
  const host = isIPv6(localAddress) ? (localAddress.startsWith('::ffff:') && isIPv4(localAddress.slice(7)) ? localAddress.slice(7) : `[${localAddress}]`) : localAddress;
  return localPort === undefined ? host : `${host}:${localPort}`;
}

/**
 * The base absolute links are built on: `PUBLIC_URL`, or the scheme and the request's Host (a request
 * whose Host is not valid never reaches a route: registerTargetRule refuses it on every path;
 * X-Forwarded-Host is never read), or, for an HTTP/1.0 request without Host, the address it reached.
 */
export function linkBase(publicUrl: string | null, request: FastifyRequest): string {
  if (publicUrl !== null) return publicUrl;
  const host = request.raw.headers.host;
  return `${schemeOf(request)}://${host ?? localAuthority(request)}`;
}

/** What the pages put before their root-relative links: `PUBLIC_URL`, or nothing (links stay on the page's own origin). */
export const pagePrefix = (publicUrl: string | null): string => publicUrl ?? '';

/**
 * A page's Content-Security-Policy with PUBLIC_URL's origin beside 'self' wherever 'self' stands:
 * the page loads its files and asks the API there, and may itself be opened at another origin (a
 * node's own address, plain http beside https).
 */
export function withPublicOrigin(csp: string, publicUrl: string | null): string {
  if (publicUrl === null) return csp;
  return csp.replaceAll("'self'", `'self' ${new URL(publicUrl).origin}`);
}

