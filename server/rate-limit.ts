import rateLimit from '@fastify/rate-limit';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import type { FailureGate } from './auth.ts';
import type { Config } from './config.ts';
import type { Metrics } from './metrics.ts';
import { Problem } from './problems.ts';

type StoreCallback = (err: Error | null, res?: { current: number; ttl: number }) => void;

/**
 * Fixed-window counters in Redis shared by every instance. Errors reach the callback, and the
 * plugin (skipOnError) lets the request through: an outage of Redis must not become an outage of
 * the API. Each error is logged and counted.
 */
function redisStore(redis: Redis, onError: (e: Error) => void) {
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

function connectRedis(url: string, log: FastifyBaseLogger): Redis {
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

export interface RateLimits {
  failureGate: FailureGate;
  close(): Promise<void>;
}

/** Per-key limits on the data routes of `scope`, and a per-address limit on failed authentication. */
export async function registerRateLimits(scope: FastifyInstance, config: Config, metrics: Metrics): Promise<RateLimits> {
  const redis = config.redisUrl ? connectRedis(config.redisUrl, scope.log) : null;
  const onStoreError = (e: Error) => {
    metrics.countRateLimitStoreError();
    scope.log.warn({ err: { message: e.message } }, 'rate-limit store error; request let through');
  };
  await scope.register(rateLimit, {
    hook: 'preHandler',
    max: config.rateLimitPerMinute,
    timeWindow: config.rateLimitWindowMs,
    skipOnError: true,
    keyGenerator: (request: FastifyRequest) => `key:${request.keyId ?? 'none'}`,
    errorResponseBuilder: (_request, context) =>
      new Problem('rate-limited', `More than ${context.max} requests in ${config.rateLimitWindowMs / 1000} s with this key; retry in ${context.after}.`),
    ...(redis ? { store: redisStore(redis, onStoreError) } : {}),
  });
  const failures = scope.createRateLimit({ max: config.authFailuresPerMinute, timeWindow: 60_000, keyGenerator: (r: FastifyRequest) => `authfail:${r.ip}` });
  const failureGate: FailureGate = async (request) => {
    const r = await failures(request);
    if (!r.isAllowed && r.isExceeded) {
      throw new Problem('rate-limited', 'Too many failed authentications from this address; retry later.', undefined, { 'retry-after': String(r.ttlInSeconds) });
    }
  };
  return { failureGate, close: async () => void redis?.disconnect() };
}
