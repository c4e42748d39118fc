import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';

type StoreCallback = (err: Error | null, res?: { current: number; ttl: number }) => void;

/** How long a request waits for Redis before it is served uncounted (fail-open). */
const WAIT_MS = 300;
/**
 * Redis applies a count only within this time of its sending, so a count Redis applies is normally
 * answered before the request stops waiting (the rest of WAIT_MS is for the answer's way back).
 */
const APPLY_WITHIN_MS = 200;

/**
 * Counts one request in a fixed window, unless Redis runs it after ARGV[2] (Unix ms on Redis's own
 * clock): then it changes nothing and answers -1. Returns the count, the window's end and Redis's time.
 */
const COUNT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if now > tonumber(ARGV[2]) then return {-1, 0, now} end
local current = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1], 'NX')
return {current, redis.call('PEXPIRETIME', KEYS[1]), now}`;

/** Takes one count back, only from the window it was counted in (ARGV[1]: that window's end). */
const REFUND = `
if redis.call('PEXPIRETIME', KEYS[1]) == tonumber(ARGV[1]) and redis.call('DECR', KEYS[1]) <= 0 then
  redis.call('DEL', KEYS[1])
end
return 0`;

/**
 * Redis's clock minus ours: a deadline Redis checks must be on its clock, the servers' own clocks may
 * be off from it by more than the deadline's margin. Each answer carries Redis's time; taking it as if it were read when the
 * answer arrived can only make the offset too small, so deadlines err early: a count may be dropped
 * that would have been in time, never applied late. Unknown until Redis answered on a connection.
 */
class RedisClock {
  private offsetMs: number | undefined;
  private readonly redis: Redis;
  constructor(redis: Redis) {
    this.redis = redis;
    redis.on('ready', () => this.read());
    redis.on('close', () => (this.offsetMs = undefined));
  }
  private read(): void {
    this.redis.time().then(([s, us]) => this.observe(Number(s) * 1000 + Math.floor(Number(us) / 1000)), () => undefined);
  }
  observe(redisNowMs: number): void {
    this.offsetMs = redisNowMs - Date.now();
  }
  /** `ms` from now on Redis's clock; undefined (and asked again) while the offset is unknown. */
  deadlineIn(ms: number): number | undefined {
    if (this.offsetMs === undefined && this.redis.status === 'ready') this.read();
    return this.offsetMs === undefined ? undefined : Date.now() + this.offsetMs + ms;
  }
}

const reply = (r: unknown): number[] => (Array.isArray(r) ? r.map(Number) : []);

/**
 * Fixed-window counters in Redis shared by every instance. When Redis does not count a request in
 * time (down, paused, slow), the callback gets an error and the request is served uncounted
 * (fail-open). Such a request must not be charged later when Redis catches up with its queue
 * (e.g. after `kill -STOP` and `-CONT`, or a command resent on reconnect), and a command once
 * written cannot be withdrawn (a paused Redis finds it in its socket on resuming, even from a
 * connection closed meanwhile). So each count carries a deadline on Redis's clock and Redis drops
 * it when late; should Redis still have counted it in time but the answer arrive after the request
 * stopped waiting, the count is given back.
 */
export function redisStore(redis: Redis, onError: (e: Error) => void) {
  const clock = new RedisClock(redis);
  const refund = (k: string, windowEnd: number) =>
    void redis.eval(REFUND, 1, k, windowEnd).catch((e: Error) => onError(new Error(`a count could not be given back: ${e.message}`)));

  return class RedisWindowStore {
    incr(key: string, cb: StoreCallback, timeWindowMs: number): void {
      const k = `fire-api:rl:${key}`;
      let settled = false;
      const fail = (e: Error) => {
        settled = true;
        onError(e);
        cb(e);
      };
      const deadline = clock.deadlineIn(APPLY_WITHIN_MS);
      if (deadline === undefined) return fail(new Error('Redis has not answered on this connection yet'));
      const timer = setTimeout(() => fail(new Error(`Redis did not count within ${WAIT_MS} ms`)), WAIT_MS);
      redis.eval(COUNT, 1, k, timeWindowMs, deadline).then(
        (r) => {
          clearTimeout(timer);
          const [current = NaN, windowEnd = NaN, now = NaN] = reply(r);
          if (Number.isFinite(now)) clock.observe(now);
          if (settled) return current > 0 ? refund(k, windowEnd) : undefined;
          if (current === -1) return fail(new Error('Redis ran the count after its deadline'));
          if (!Number.isFinite(current) || !Number.isFinite(windowEnd)) return fail(new Error('unexpected Redis reply'));
          settled = true;
          cb(null, { current, ttl: Math.max(windowEnd - now, 0) });
        },
        (e: Error) => {
          clearTimeout(timer);
          if (!settled) fail(e);
        },
      );
    }
    child(): RedisWindowStore {
      return this;
    }
  };
}

export function connectRedis(url: string, log: FastifyBaseLogger): Redis {
  // No offline queue: with Redis down a request fails at once; the store bounds the wait otherwise.
  // No commandTimeout: the store keeps waiting for a late answer, to refund a count it no longer wanted.
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 1000, retryStrategy: (n) => Math.min(n * 200, 2000) });
  let lastLogMs = 0;
  redis.on('error', (e: Error) => {
    if (Date.now() - lastLogMs < 10_000) return;
    lastLogMs = Date.now();
    log.error({ err: { message: e.message } }, 'rate-limit store (Redis) unreachable; requests are let through');
  });
  return redis;
}
