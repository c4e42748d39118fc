import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';

type StoreCallback = (err: Error | null, res?: { current: number; ttl: number }) => void;

/**
 * Fixed-window counters in Redis shared by every instance. Errors reach the callback, and the
 * request is let through uncounted: an outage of Redis must not become an outage of the API. Each
 * error is logged and counted.
 */
export function redisStore(redis: Redis, onError: (e: Error) => void) {
  return class RedisWindowStore {
    incr(key: string, cb: StoreCallback, timeWindowMs: number): void {
      const k = `fire-api:rl:${key}`;
      redis
        .multi()
        .incr(k)
        .pexpire(k, timeWindowMs, 'NX')
        .pttl(k)
        .exec()
        .then((replies) => {
          const current = Number(replies?.[0]?.[1]);
          const ttl = Number(replies?.[2]?.[1]);
          if (!Number.isFinite(current) || !Number.isFinite(ttl)) throw new Error('unexpected Redis reply');
          cb(null, { current, ttl: Math.max(ttl, 0) });
        })
        .catch((e: Error) => {
          onError(e);
          cb(e);
        });
    }
    child(): RedisWindowStore {
      return this;
    }
  };
}

export function connectRedis(url: string, log: FastifyBaseLogger): Redis {
  // No offline queue and a short command timeout: with Redis down, a request waits at most ~300 ms.
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 300, connectTimeout: 1000, retryStrategy: (n) => Math.min(n * 200, 2000) });
  let lastLogMs = 0;
  redis.on('error', (e: Error) => {
    if (Date.now() - lastLogMs < 10_000) return;
    lastLogMs = Date.now();
    log.error({ err: { message: e.message } }, 'rate-limit store (Redis) unreachable; requests are let through');
  });
  return redis;
}
