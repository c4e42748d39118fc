import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../server/config.ts';
import { isHostValue } from '../../../server/http/public-url.ts';
import { ContractChecker } from '../../openapi/contract-checker.ts';
import { rawExchange, type RawAnswer } from '../../helpers/raw-http.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { absoluteLinks, pageLinks } from '../../helpers/links.ts';

// Links are built from PUBLIC_URL when it is set, else from a Host that is a valid host[:port];
// any other Host, a missing one on HTTP/1.1, CONNECT and absolute-form targets are problems.
// Requests go over raw sockets: an HTTP client would correct or refuse what these send.
const PUBLIC = 'https://fire.example.org/data';

let plain: TestServer;
let pinned: TestServer;
let checker: ContractChecker;
beforeAll(async () => {
  const dataDir = await writeSampleData();
  // TRUST_PROXY on both: X-Forwarded-Host is still never a link's host.
  plain = await startServer(dataDir, { TRUST_PROXY: 'true' });
  pinned = await startServer(dataDir, { TRUST_PROXY: 'true', PUBLIC_URL: `${PUBLIC}/` });
  checker = await ContractChecker.create(await (await fetch(`${plain.url}/api/v1/docs`)).json());
});
afterAll(async () => {
  await plain?.close();
  await pinned?.close();
});

/** One request, its header lines as given (Host included or not), the connection closed after it. */
function send(server: TestServer, requestLine: string, headers: string[]): Promise<RawAnswer> {
  return rawExchange(server.url, `${requestLine}\r\n${[...headers, 'Connection: close'].map((h) => `${h}\r\n`).join('')}\r\n`);
}
const get = (server: TestServer, path: string, headers: string[]) => send(server, `GET ${path} HTTP/1.1`, [`Authorization: Bearer ${server.key}`, ...headers]);

function expectProblem(answer: RawAnswer, status: number, kind: string): Record<string, unknown> {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(answer.headers.connection).toBe('close');
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  expect(body).toMatchObject({ type: `/api/v1/docs#problem-${kind}`, status, code: kind });
  expect(checker.checkProblem(answer.body)).toEqual([]);
  return body;
}

const ITEMS = '/api/v1/ogc/collections/hotspots/items?limit=2';

describe('a Host that is not a valid host[:port] is a 400 problem and never reaches a link', () => {
  // `host:` (an empty port) is RFC 3986's, but no port is a port: refused too.
  const hostile = ['a>; rel="evil"', 'x"y', '', 'a b', 'exa<mple', 'a/b', 'user@host', 'host:99999', 'host:', 'host:8o', '[zz]', '[::1', '::1', '%zz', 'a%20b', '%0d%0a', '[fe80::1%eth0]', '999.1.1.1', '0x7f.1', 'a'.repeat(254)];
  it.each(hostile.map((h) => [h]))('Host %j: 400 malformed-request on the items, the landing page, the explorer, /healthz and a path no route has', async (host) => {
    for (const path of [ITEMS, '/api/v1/ogc', '/api/v1/explore', '/healthz', '/no/such/path']) {
      const answer = await get(plain, path, [`Host: ${host}`]);
      const body = expectProblem(answer, 400, 'malformed-request');
      expect(body.detail).toMatch(/Host header/);
      expect(answer.headers.link).toBeUndefined();
      if (/[<>"@]/.test(host)) expect(answer.body).not.toContain(host);
    }
  });

  it('two Host headers: 400, whichever is valid', async () => {
    expectProblem(await get(plain, ITEMS, ['Host: a.example', 'Host: b.example']), 400, 'malformed-request');
  });

  it('the rule is RFC 3986 host[:port] as URL parsers read it back: reg-names (underscores and sub-delims too), IPv4, bracketed IPv6 without a zone, a port up to 65535', () => {
    for (const ok of ['localhost', 'fire_api', 'Fire.Example.org', 'example.org.', 'xn--bcher-kva.example', '127.0.0.1:8080', 'LOCALHOST:80', '[::1]', '[2001:db8::1]:443', 'a-b.c:65535', "a!$&'()*+,;=b"]) expect(isHostValue(ok), ok).toBe(true);
    for (const bad of hostile) expect(isHostValue(bad), bad).toBe(false);
  });
});

describe('without PUBLIC_URL, links are built from the valid Host', () => {
  it.each([['localhost'], ['fire_api'], ['127.0.0.1:8080'], ['[::1]:8080'], ['Fire.Example.org']])('Host %s: every OGC link and Link header under http://<Host>, X-Forwarded-Host ignored', async (host) => {
    for (const path of ['/api/v1/ogc', '/api/v1/ogc/collections', '/api/v1/ogc/collections/hotspots', ITEMS]) {
      const answer = await get(plain, path, [`Host: ${host}`, 'X-Forwarded-Host: evil.example']);
      expect(answer.status).toBe(200);
      const links = absoluteLinks(answer);
      expect(links.length).toBeGreaterThan(2);
      for (const l of links) expect(l.startsWith(`http://${host}/api/v1/`), l).toBe(true);
    }
  });

  it('X-Forwarded-Proto (TRUST_PROXY) chooses https; any other value it sends is http', async () => {
    for (const [proto, scheme] of [['https', 'https'], ['javascript', 'http'], ['http', 'http']] as const) {
      const answer = await get(plain, ITEMS, ['Host: fire.example.org', `X-Forwarded-Proto: ${proto}`]);
      expect(answer.status).toBe(200);
      const links = absoluteLinks(answer);
      expect(links.length).toBeGreaterThan(2);
      for (const l of links) expect(l.startsWith(`${scheme}://fire.example.org/api/v1/`), l).toBe(true);
    }
  });

  it('an HTTP/1.1 request without Host: the documented 400 problem, not an empty body', async () => {
    const body = expectProblem(await send(plain, 'GET /api/v1/ogc HTTP/1.1', [`Authorization: Bearer ${plain.key}`]), 400, 'malformed-request');
    expect(body.detail).toMatch(/must carry a Host/);
  });

  it('an HTTP/1.0 request without Host (legal) is answered, its links under the address it reached', async () => {
    const answer = await send(plain, 'GET /api/v1/ogc HTTP/1.0', [`Authorization: Bearer ${plain.key}`]);
    expect(answer.status).toBe(200);
    expect(absoluteLinks(answer).length).toBeGreaterThan(2);
    for (const l of absoluteLinks(answer)) expect(l.startsWith(`${plain.url}/api/v1/`), l).toBe(true);
  });
});

describe('requests the HTTP layer refuses are problems too', () => {
  it('CONNECT (authority-form): a 404 problem and a closed connection, not silence', async () => {
    const body = expectProblem(await send(plain, 'CONNECT example.com:443 HTTP/1.1', ['Host: example.com:443']), 404, 'not-found');
    expect(body.instance).toBe('');
  });

  it('an absolute-form target: a 400 problem that says this server is not a proxy, its URL not echoed', async () => {
    const answer = await send(plain, 'GET http://evil.example/api/v1/ogc HTTP/1.1', ['Host: localhost', `Authorization: Bearer ${plain.key}`]);
    const body = expectProblem(answer, 400, 'malformed-request');
    expect(body.detail).toMatch(/not a proxy/);
    expect(answer.body).not.toContain('evil.example');
  });

  it('authority-form on another method: a 400 problem', async () => {
    expectProblem(await send(plain, 'GET example.com:80 HTTP/1.1', ['Host: localhost']), 400, 'malformed-request');
  });

  it('an Expect other than 100-continue: answered as if it had none, not with an empty 417', async () => {
    const answer = await send(plain, 'GET /healthz HTTP/1.1', ['Host: localhost', 'Expect: something-else']);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ status: 'ok' });
  });

  it.each([['OPTIONS *'], ['TRACE /api/v1/ogc'], ['PROPFIND /api/v1/hotspots'], ['PATCH /healthz']])('%s: the documented 404 problem', async (line) => {
    expectProblem(await send(plain, `${line} HTTP/1.1`, ['Host: localhost']), 404, 'not-found');
  });
});

describe('with PUBLIC_URL, every link is under it whatever Host and X-Forwarded-* say', () => {
  const lying = ['Host: 127.0.0.1:9', 'X-Forwarded-Host: evil.example', 'X-Forwarded-Proto: http'];

  it('OGC JSON documents and items: every href and every Link header', async () => {
    const items = await get(pinned, ITEMS, lying);
    expect(items.status).toBe(200);
    const id = (JSON.parse(items.body) as { features: { id: string }[] }).features[0]!.id;
    const paths = ['/api/v1/ogc', '/api/v1/ogc/', '/api/v1/ogc/collections', '/api/v1/ogc/collections/hotspots', '/api/v1/ogc/collections/burnt-areas/queryables', ITEMS, `/api/v1/ogc/collections/hotspots/items/${id}`];
    for (const path of paths) {
      const answer = await get(pinned, path, lying);
      expect(answer.status, path).toBe(200);
      const links = absoluteLinks(answer);
      expect(links.length, path).toBeGreaterThan(0);
      for (const l of links) expect(l.startsWith(`${PUBLIC}/api/v1/`), `${path}: ${l}`).toBe(true);
    }
    expect(items.headers.link).toMatch(/rel="next"/);
  });

  it('the pages (explorer, OGC shells, documentation): every href and src, and the base their scripts build URLs on', async () => {
    for (const path of ['/api/v1/explore', '/api/v1/ogc?f=html', '/api/v1/ogc/collections/hotspots/items?f=html', '/api/v1/docs?format=html']) {
      const answer = await send(pinned, `GET ${path} HTTP/1.1`, lying);
      expect(answer.status, path).toBe(200);
      const { links, base } = pageLinks(answer.body);
      // The documentation page's script asks for the document next to it: it has no base of its own.
      expect(base).toBe(path.startsWith('/api/v1/docs') ? null : PUBLIC);
      expect(links.length).toBeGreaterThanOrEqual(5);
      for (const l of links) expect(l.startsWith(`${PUBLIC}/api/v1/`), `${path}: ${l}`).toBe(true);
      // Its files and the API are at the public origin: the page works when opened at another (a node's own address).
      expect(answer.headers['content-security-policy']).toMatch(/script-src 'self' https:\/\/fire\.example\.org;/);
      expect(answer.headers['content-security-policy']).toMatch(/connect-src 'self' https:\/\/fire\.example\.org;/);
    }
  });

  it("the OpenAPI document's server is the public URL", async () => {
    const answer = await send(pinned, 'GET /api/v1/docs HTTP/1.1', lying);
    expect((JSON.parse(answer.body) as { servers: { url: string }[] }).servers).toEqual([{ url: PUBLIC }]);
  });

  it('an invalid Host is still refused: PUBLIC_URL does not make a malformed request valid', async () => {
    expectProblem(await get(pinned, ITEMS, ['Host: a>b']), 400, 'malformed-request');
  });

  it('without PUBLIC_URL the pages keep root-relative links and let their scripts use their own origin', async () => {
    const { links, base } = pageLinks((await send(plain, 'GET /api/v1/explore HTTP/1.1', ['Host: localhost'])).body);
    expect(base).toBe('');
    for (const l of links) expect(l.startsWith('/api/v1/'), l).toBe(true);
  });
});

describe('PUBLIC_URL is checked at start', () => {
  it.each([['fire.example.org'], ['ftp://fire.example.org/'], ['https://user:pw@fire.example.org/'], ['https://fire.example.org/?a=1'], ['https://fire.example.org/#top'], ['/data/']])('%s: a configuration error naming PUBLIC_URL', (value) => {
    expect(() => loadConfig({ PUBLIC_URL: value })).toThrow(ConfigError);
    expect(() => loadConfig({ PUBLIC_URL: value })).toThrow(/PUBLIC_URL/);
  });

  it.each([
    ['https://fire.example.org/data/', 'https://fire.example.org/data'],
    ['https://Fire.Example.org', 'https://fire.example.org'],
    ['http://10.0.0.5:8080/a/b//', 'http://10.0.0.5:8080/a/b'],
    ['', null],
  ])('%j is the base %j', (value, base) => {
    expect(loadConfig({ PUBLIC_URL: value }).publicUrl).toBe(base);
  });
});
