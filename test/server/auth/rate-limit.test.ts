import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../../server/keys/key-admin.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startServer, TEST_HOLDER, type TestServer } from '../../helpers/server.ts';

const DATA = '/api/v1/fire-danger?from=2025-08-01&to=2025-08-02&format=csv';
let dataDir: string;
let server: TestServer;
/** A second key, in the registry before the server starts (no wait for a reload). */
let spare: string;

async function hit(s: TestServer, key: string, p = DATA): Promise<Response> {
  const r = await fetch(`${s.url}${p}`, { headers: { authorization: `Bearer ${key}` } });
  await r.arrayBuffer();
  return r;
}

beforeAll(async () => {
  dataDir = await writeSampleData();
  const keysFile = path.join(await tempDir('fire-api-keys-'), 'keys.json');
  spare = (await issueKey(keysFile, TEST_HOLDER, 30)).key;
  server = await startServer(dataDir, { RATE_LIMIT_PER_MINUTE: '120', KEYS_FILE: keysFile });
});
afterAll(() => server.close());

describe('120 requests per minute per key', () => {
  it('request 120 passes, 121 is a 429 problem with an integer Retry-After; headers on every data response', async () => {
    const key = spare;
    let last: Response | null = null;
    for (let i = 1; i <= 120; i++) {
      // Bad requests count too: every data request, whatever its status.
      last = await hit(server, key, i % 10 === 0 ? '/api/v1/fire-danger?level=nope' : DATA);
      expect(last.status).toBe(i % 10 === 0 ? 400 : 200);
      expect(last.headers.get('x-ratelimit-limit')).toBe('120');
      expect(last.headers.get('x-ratelimit-remaining')).toBe(String(120 - i));
      expect(Number(last.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0);
    }
    const over = await fetch(`${server.url}${DATA}`, { headers: { authorization: `Bearer ${key}` } });
    expect(over.status).toBe(429);
    expect(over.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(Number(over.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(await over.json()).toMatchObject({ type: '/api/v1/docs#problem-rate-limited', status: 429 });
    // Another key is untouched by this key's exhaustion.
    expect((await hit(server, server.key)).status).toBe(200);
  }, 60_000);

  it('Retry-After is honest: a retry after that many seconds succeeds', async () => {
    const s = await startServer(dataDir, { RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_WINDOW_MS: '2000' });
    try {
      for (let i = 0; i < 3; i++) expect((await hit(s, s.key)).status).toBe(200);
      const over = await hit(s, s.key);
      expect(over.status).toBe(429);
      const wait = Number(over.headers.get('retry-after'));
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(2);
      await new Promise((r) => setTimeout(r, wait * 1000));
      expect((await hit(s, s.key)).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('failed authentication is limited per client address', async () => {
    const s = await startServer(dataDir, { AUTH_FAILURES_PER_MINUTE: '5' });
    try {
      const statuses = [];
      for (let i = 0; i < 7; i++) statuses.push((await hit(s, `frk_guess${String(i).padStart(3, '0')}_${'x'.repeat(43)}`)).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
      // A valid key from the same address is not locked out by the guessing.
      expect((await hit(s, s.key)).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
