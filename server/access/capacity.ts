import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { atCapacity } from '../http/problems.ts';

/**
 * Overload: with every connection busy and the queue full, a request that will need a connection
 * is refused before any file is listed or checked, so refusals cost next to nothing and leave
 * the cores to the requests being served. A request that may be answered without one (a 304 over
 * checked files, rows from the cache or from renderings, `cached` being true when such a cache is
 * on for it) still goes through.
 */
export function refuseWhenSaturated(request: FastifyRequest, ctx: AppContext, cached: boolean): void {
  const engine = ctx.extract.engine;
  if (!engine.saturated || request.headers['if-none-match'] !== undefined || cached) return;
  throw atCapacity(engine.refuse(), ctx.config.retryAfterSeconds);
}
