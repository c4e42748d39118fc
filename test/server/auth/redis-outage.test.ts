import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeSampleData } from '../../helpers/sample-data.ts';
import { slowLink, startRedis, type RedisServer } from '../../helpers/redis.ts';
import { needService, redisServer } from '../../helpers/services.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

const DATA = '/api/v1/fire-danger?from=2025-08-01&to=2025-08-02&format=csv';
const REDIS = redisServer();
let dataDir: string;

beforeAll(async () => {
  dataDir = await writeSampleData();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  limit: string | null;
  remaining: string | null;
  reset: string | null;
}

async function hit(s: TestServer): Promise<Answer> {
  const r = await s.get(DATA);
  await r.arrayBuffer();
  const h = (name: string) => r.headers.get(`x-ratelimit-${name}`);
  return { status: r.status, limit: h('limit'), remaining: h('remaining'), reset: h('reset') };
}

const counted = (remaining: number) => ({ status: 200, limit: '50', remaining: String(remaining), reset: expect.stringMatching(/^[1-9]\d*$/) });
const uncounted = { status: 200, limit: '50', remaining: null, reset: null };

/** Hits `s` until its Redis counts (it connects, or reconnects within its retry delay of at most 2 s). */
async function untilCounted(s: TestServer): Promise<Answer> {
  let answer = await hit(s);
  for (const end = Date.now() + 6000; answer.remaining === null && Date.now() < end; answer = await hit(s)) {
    expect(answer).toEqual(uncounted);
    await sleep(100);
  }
  return answer;
}

/** The counters' values, asked until they are `last` (at most 10 s); each value seen on the way must be one of `path`. */
async function countersBecome(redis: RedisServer, path: string[]): Promise<string[]> {
  const last = path.at(-1);
  let values = Object.values(await counters(redis)) as string[];
  for (const end = Date.now() + 10_000; !(values.length === 1 && values[0] === last) && Date.now() < end; values = Object.values(await counters(redis)) as string[]) {
    expect(values.length === 1 && path.includes(values[0]!)).toBe(true);
    await sleep(50);
  }
  return values;
}

/** Every per-key counter in `redis` with its value. */
async function counters(redis: RedisServer): Promise<Record<string, string | null>> {
  const client = new Redis(redis.url);
  try {
    const keys = await client.keys('fire-api:rl:key:*');
    return Object.fromEntries(await Promise.all(keys.map(async (k) => [k, await client.get(k)] as const)));
  } finally {
    client.disconnect();
  }
}

describe('rate-limit headers when Redis cannot count', () => {
  it('Redis stopped: answers are 200 with the limit but no remaining count or reset; once Redis is back both resume', async (ctx) => {
    const program = needService(ctx, REDIS);
    const redis = await startRedis(program);
    const s = await startServer(dataDir, { REDIS_URL: redis.url, RATE_LIMIT_PER_MINUTE: '50' });
    let again: RedisServer | undefined;
    try {
      expect(await untilCounted(s)).toEqual(counted(49));
      await redis.stop();
      for (let i = 0; i < 3; i++) expect(await hit(s)).toEqual(uncounted);
      again = await startRedis(program, redis.port);
      // The new redis-server keeps nothing, so the window starts afresh.
      expect(await untilCounted(s)).toEqual(counted(49));
      expect(await hit(s)).toEqual(counted(48));
    } finally {
      await s.close();
      await again?.stop();
    }
  });

  it('Redis paused, then resumed: the requests served during the pause are never charged', async (ctx) => {
    const redis = await startRedis(needService(ctx, REDIS));
    const s = await startServer(dataDir, { REDIS_URL: redis.url, RATE_LIMIT_PER_MINUTE: '50' });
    try {
      expect(await untilCounted(s)).toEqual(counted(49));
      expect(await hit(s)).toEqual(counted(48));
      redis.pause();
      try {
        for (let i = 0; i < 3; i++) expect(await hit(s)).toEqual(uncounted);
      } finally {
        redis.resume();
      }
      // Redis now runs what waited in its socket during the pause; give it time to.
      await sleep(500);
      expect(Object.values(await counters(redis))).toEqual(['2']);
      expect(await hit(s)).toEqual(counted(47));
    } finally {
      await s.close();
      await redis.stop();
    }
  });

  it('a count still waiting in a paused Redis when its server goes away is not applied when Redis resumes', async (ctx) => {
    const redis = await startRedis(needService(ctx, REDIS));
    try {
      const s = await startServer(dataDir, { REDIS_URL: redis.url, RATE_LIMIT_PER_MINUTE: '50' });
      try {
        expect(await untilCounted(s)).toEqual(counted(49));
        redis.pause();
        expect(await hit(s)).toEqual(uncounted);
      } finally {
        // Its connection closes with the count unread; no answer will ever reach this server.
        await s.close();
        redis.resume();
      }
      await sleep(500);
      expect(Object.values(await counters(redis))).toEqual(['1']);
    } finally {
      await redis.stop();
    }
  });

  it('a count Redis made in time but answered too late is given back', async (ctx) => {
    const redis = await startRedis(needService(ctx, REDIS));
    const link = await slowLink(redis);
    const s = await startServer(dataDir, { REDIS_URL: link.url, RATE_LIMIT_PER_MINUTE: '50' });
    try {
      expect(await untilCounted(s)).toEqual(counted(49));
      link.replyDelayMs = 700;
      expect(await hit(s)).toEqual(uncounted);
      // The answer arrives after 700 ms, the request having stopped waiting at 300 ms: then the refund.
      expect(await countersBecome(redis, ['2', '1'])).toEqual(['1']);
      link.replyDelayMs = 0;
      expect(await untilCounted(s)).toEqual(counted(48));
    } finally {
      await s.close();
      await link.close();
      await redis.stop();
    }
  });
});
