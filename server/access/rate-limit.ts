import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FailureGate } from './auth.ts';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import { isHtmlShell } from '../ogc/html.ts';
import { Problem } from '../http/problems.ts';
import { connectRedis, redisStore } from './rate-limit-store.ts';

export interface RateLimits {
  failureGate: FailureGate;
  close(): Promise<void>;
}

/**
 * The per-key limit as a preHandler hook of `scope`. Every counted answer carries the limit, what is
 * left and when the window ends. When the store could not count (Redis down or not answering in
 * time) the request is served and its answer carries only the limit: a remaining count or reset
 * time would be made up, and clients that pace themselves by them would trust it.
 */
function limitPerKey(scope: FastifyInstance, config: Config) {
  const count = scope.createRateLimit({ skipOnError: false, keyGenerator: (request: FastifyRequest) => `key:${request.keyId ?? 'none'}` });
  const limit = String(config.rateLimitPerMinute);
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    // Page shells pass without a key (and hold no data): nothing to count them against.
    if (isHtmlShell(request)) return;
    reply.header('x-ratelimit-limit', limit);
    // The store has logged and counted its error; the request is let through.
    const r = await count(request).catch(() => null);
    if (!r || r.isAllowed) return;
    reply.header('x-ratelimit-remaining', String(r.remaining)).header('x-ratelimit-reset', String(r.ttlInSeconds));
    if (r.isExceeded) {
      const detail = `More than ${limit} requests in ${config.rateLimitWindowMs / 1000} s with this key; retry in ${r.ttlInSeconds} s.`;
      throw new Problem('rate-limited', detail, undefined, { 'retry-after': String(r.ttlInSeconds) });
    }
  };
}

/** Per-key limits on the data routes of `scope`, and a per-address limit on failed authentication. */
export async function registerRateLimits(scope: FastifyInstance, config: Config, metrics: Metrics): Promise<RateLimits> {
  const redis = config.redisUrl ? connectRedis(config.redisUrl, scope.log) : null;
  const onStoreError = (e: Error) => {
    metrics.countRateLimitStoreError();
    scope.log.warn({ err: { message: e.message } }, 'rate-limit store error; request let through');
  };
  // global: false — the plugin adds no hook of its own; its limiters are called explicitly.
  await scope.register(rateLimit, {
    global: false,
    max: config.rateLimitPerMinute,
    timeWindow: config.rateLimitWindowMs,
    skipOnError: true,
    ...(redis ? { store: redisStore(redis, onStoreError) } : {}),
  });
  scope.addHook('preHandler', limitPerKey(scope, config));
  const failures = scope.createRateLimit({ max: config.authFailuresPerMinute, timeWindow: 60_000, keyGenerator: (r: FastifyRequest) => `authfail:${r.ip}` });
  const failureGate: FailureGate = async (request) => {
    const r = await failures(request);
    if (!r.isAllowed && r.isExceeded) {
      throw new Problem('rate-limited', 'Too many failed authentications from this address; retry later.', undefined, { 'retry-after': String(r.ttlInSeconds) });
    }
  };
  return { failureGate, close: async () => void redis?.disconnect() };
}
