import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../server/config.ts';
import { issueKey, revokeKey } from '../../../server/keys/key-admin.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, TEST_HOLDER, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
const DATA = '/api/v1/hotspots?from=2025-08-01&to=2025-08-02';
const call = (headers: Record<string, string>, p = DATA) => fetch(`${server.url}${p}`, { headers });
/** Asks until the answer is `status` (true), or gives up after 20 s (false). */
async function statusBecomes(headers: Record<string, string>, status: number): Promise<boolean> {
  const end = Date.now() + 20_000;
  while (Date.now() < end) {
    const r = await call(headers);
    await r.body?.cancel();
    if (r.status === status) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}
const problem = async (r: Response) => {
  const body = (await r.json()) as Record<string, unknown>;
  delete body.requestId;
  return body;
};

beforeAll(async () => {
  server = await startServer(await writeSampleData());
});
afterAll(() => server.close());

describe('401: no key, malformed header or unknown key', () => {
  it('missing header: 401 with a Bearer and a Basic challenge and a problem body', async () => {
    const r = await call({});
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBe('Bearer realm="research-read-api", Basic realm="research-read-api", charset="UTF-8"');
    expect(await problem(r)).toMatchObject({ type: '/api/v1/docs#problem-unauthorized', status: 401 });
  });

  it('wrong scheme, malformed key, unknown id and a real id with a wrong secret all get the same answer', async () => {
    const wrongSecret = `${server.key.slice(0, 13)}${'A'.repeat(43)}`;
    const tokens = [`Digest username="a"`, 'Bearer nonsense', `Bearer frk_zzzzzzzz_${'B'.repeat(43)}`, `Bearer ${wrongSecret}`];
    const answers = [];
    for (const authorization of tokens) {
      const r = await call({ authorization });
      expect(r.status).toBe(401);
      answers.push({ challenge: r.headers.get('www-authenticate'), body: await problem(r) });
    }
    const presented = answers.slice(1);
    expect(new Set(presented.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[1]!.challenge).toContain('error="invalid_token"');
  });

  it('a key in the query string is never accepted', async () => {
    for (const name of ['key', 'api_key', 'access_token']) {
      const r = await call({}, `${DATA}&${name}=${server.key}`);
      expect(r.status).toBe(401);
      await r.body?.cancel();
    }
  });

  it('operating endpoints need no key', async () => {
    for (const p of ['/healthz', '/readyz', '/metrics']) expect((await call({}, p)).status).toBe(200);
  });
});

describe('403: known key, revoked or expired', () => {
  // The registry is polled every KEYS_RELOAD_MS, and the setting cannot exceed 2 s: that is the
  // promise. The tests wait for the poll (the state), not for the clock.
  it('KEYS_RELOAD_MS, how often the registry is polled, cannot be set above 2 s', () => {
    expect(loadConfig({ KEYS_RELOAD_MS: '2000' }).keysReloadMs).toBe(2000);
    expect(() => loadConfig({ KEYS_RELOAD_MS: '2001' })).toThrow(/KEYS_RELOAD_MS/);
  });

  it('a key revoked while the server runs is refused at the next poll, without restart', async () => {
    const { key, record } = await issueKey(server.keysFile, TEST_HOLDER, 30);
    const as = (k: string) => ({ authorization: `Bearer ${k}` });
    expect(await statusBecomes(as(key), 200)).toBe(true);
    await revokeKey(server.keysFile, record.id);
    expect(await statusBecomes(as(key), 403)).toBe(true);
  });

  it('a new key is accepted at the next poll', async () => {
    const { key } = await issueKey(server.keysFile, TEST_HOLDER, 30);
    expect(await statusBecomes({ authorization: `Bearer ${key}` }, 200)).toBe(true);
  });

  it('expiry is exact: valid just before expiresAtUtc, refused at it', async () => {
    const file = path.join(await tempDir(), 'keys.json');
    const issuedAt = Date.parse('2026-01-01T00:00:00Z');
    const { key } = await issueKey(file, TEST_HOLDER, 1, issuedAt);
    const { KeyRegistry } = await import('../../../server/keys/key-registry.ts');
    const registry = new KeyRegistry(file, server.app.log);
    await registry.load();
    const expiresAt = issuedAt + 86_400_000;
    expect(registry.verify(key, expiresAt - 1).status).toBe('valid');
    expect(registry.verify(key, expiresAt)).toMatchObject({ status: 'expired' });
    const r = await startServer(await writeSampleData(), { KEYS_FILE: file });
    try {
      const res = await fetch(`${r.url}${DATA}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(403);
      expect(await problem(res)).toMatchObject({ type: '/api/v1/docs#problem-forbidden', status: 403, detail: expect.stringContaining('expired') });
    } finally {
      await r.close();
    }
  });
});
