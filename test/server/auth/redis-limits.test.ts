import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startServer as startServerProcess } from '../../../bench/server/server-process.ts';
import { issueKey } from '../../../server/keys/key-admin.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { startRedis, type RedisServer } from '../../helpers/redis.ts';
import { needService, redisServer } from '../../helpers/services.ts';
import { startServer, TEST_HOLDER, type TestServer } from '../../helpers/server.ts';

const DATA = '/api/v1/fire-danger?from=2025-08-01&to=2025-08-02&format=csv';
const REDIS = redisServer();
let redis: RedisServer | undefined;
let dataDir: string;

async function hit(s: { url: string }, key: string): Promise<Response> {
  const r = await fetch(`${s.url}${DATA}`, { headers: { authorization: `Bearer ${key}` } });
  await r.arrayBuffer();
  return r;
}

beforeAll(async () => {
  // Without the program the tests skip (or fail in CI) on their own; nothing to start here.
  if (REDIS.path) redis = await startRedis(REDIS.path);
  dataDir = await writeSampleData();
});
afterAll(async () => {
  await redis?.stop();
});

describe('several instances on one Redis', () => {
  it('two server processes enforce one limit per key, and one key never spends another key’s budget', async (ctx) => {
    needService(ctx, REDIS);
    if (!redis) throw new Error('redis-server did not start');
    // Both keys are in the registry before either server starts: no wait for a reload.
    const keysFile = path.join(await tempDir('fire-api-keys-'), 'keys.json');
    const { key: other } = await issueKey(keysFile, TEST_HOLDER, 30);
    const a = await startServer(dataDir, { REDIS_URL: redis.url, RATE_LIMIT_PER_MINUTE: '10', KEYS_FILE: keysFile });
    const port = await freePort();
    const env = { DATA_DIR: dataDir, TEMP_DIR: `${dataDir}/.tmp-b`, KEYS_FILE: a.keysFile, REDIS_URL: redis.url, RATE_LIMIT_PER_MINUTE: '10', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
    const child = await startServerProcess(env, {});
    const b = { url: child.baseUrl };
    try {
      const statuses = [];
      for (let i = 0; i < 12; i++) statuses.push((await hit(i % 2 ? b : a, a.key)).status);
      expect(statuses).toEqual([...Array(10).fill(200), 429, 429]);
      expect((await hit(b, other)).status).toBe(200);
      expect((await hit(a, other)).headers.get('x-ratelimit-remaining')).toBe('8');
    } finally {
      await a.close();
      await child.stop();
    }
  });
});

describe('Redis down: fail open, bounded, logged, counted', () => {
  it('requests neither hang nor leak Redis errors when Redis stops', async (ctx) => {
    const own = await startRedis(needService(ctx, REDIS));
    const logs = new PassThrough();
    let logText = '';
    logs.on('data', (c: Buffer) => (logText += c.toString()));
    const s = await startServer(dataDir, { REDIS_URL: own.url, RATE_LIMIT_PER_MINUTE: '5', LOG_LEVEL: 'warn' }, { logStream: logs });
    try {
      expect((await hit(s, s.key)).status).toBe(200);
      await own.stop();
      // A request that waited on the stopped Redis would hang here until the test's timeout; how long a
      // silent Redis is waited for is the paused-Redis test's subject.
      for (let i = 0; i < 8; i++) {
        const r = await fetch(`${s.url}${DATA}`, { headers: { authorization: `Bearer ${s.key}` } });
        const body = await r.text();
        expect(r.status).toBe(200);
        expect(body).not.toMatch(/redis|ECONNREFUSED/i);
      }
      const metrics = await (await fetch(`${s.url}/metrics`)).text();
      expect(Number(/fire_api_rate_limit_store_errors_total (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(8);
      expect(logText).toMatch(/rate-limit store/);
    } finally {
      await s.close();
    }
  });
});
