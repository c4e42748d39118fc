import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presentedKey } from '../../../server/access/auth.ts';
import { issueKey, revokeKey } from '../../../server/keys/key-admin.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, TEST_HOLDER, type TestServer } from '../../helpers/server.ts';

const DATA = '/api/v1/hotspots?from=2025-08-01&to=2025-08-02&format=csv';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

describe('the key a request presents', () => {
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer   abc ', 'abc'],
    [basic('qgis', 'frk_k'), 'frk_k'],
    [basic('', 'frk_k'), 'frk_k'],
    [basic('a:b', 'c'), 'b:c'],
    [basic('user', ''), null],
    [`Basic ${Buffer.from('no-colon').toString('base64')}`, null],
    ['Basic !!!', null],
    ['Digest username="x"', null],
    [undefined, null],
  ])('%s -> %s', (header, key) => {
    expect(presentedKey(header)).toBe(key);
  });
});

describe('HTTP Basic with the key as the password', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(await writeSampleData(), { RATE_LIMIT_PER_MINUTE: '5' });
  });
  afterAll(() => server.close());

  const call = (authorization: string | null, p = DATA) => fetch(`${server.url}${p}`, { headers: authorization ? { authorization } : {} });

  it('gets the bytes a bearer header gets, whatever the user name', async () => {
    const bearer = await call(`Bearer ${server.key}`);
    const text = await bearer.text();
    for (const user of ['qgis', '', 'ä user']) {
      const r = await call(basic(user, server.key));
      expect(r.status).toBe(200);
      expect(await r.text()).toBe(text);
    }
  });

  it('a wrong password is a 401 naming both schemes; a revoked key is a 403', async () => {
    const wrong = await call(basic('qgis', `${server.key.slice(0, 13)}${'A'.repeat(43)}`));
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="research-read-api", error="invalid_token", Basic realm="research-read-api", charset="UTF-8"');
    const { key, record } = await issueKey(server.keysFile, TEST_HOLDER, 30);
    await revokeKey(server.keysFile, record.id);
    let status = 0;
    for (let i = 0; i < 60 && status !== 403; i++) {
      status = (await call(basic('qgis', key))).status;
      if (status !== 403) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(403);
  });

  it('one key has one rate limit, whichever way it is sent', async () => {
    const { key } = await issueKey(server.keysFile, TEST_HOLDER, 30);
    let accepted = 0;
    for (let i = 0; accepted === 0 && i < 60; i++) {
      const r = await call(`Bearer ${key}`);
      await r.body?.cancel();
      if (r.status === 200) accepted = 1;
      else await new Promise((done) => setTimeout(done, 50));
    }
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await call(i % 2 ? `Bearer ${key}` : basic('x', key));
      await r.body?.cancel();
      statuses.push(r.status);
    }
    // Five a minute: the first bearer request and four more, then 429 for both schemes alike.
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });

  it('a key in the query string is a 401 that never echoes it', async () => {
    const r = await call(null, `${DATA}&key=${server.key}`);
    expect(r.status).toBe(401);
    expect(await r.text()).not.toContain(server.key.slice(4));
  });
});
