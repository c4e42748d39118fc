import type { Sources } from '../sources/preflight.ts';
import { listSources, querySpec } from '../sources/request-sources.ts';
import { FORMATS, wholeWindowBody } from '../formats.ts';
import { streamGroups } from './extract-stream.ts';
import type { Extract, ExtractRequest } from '../sources/context.ts';
import { answerInMemory, inMemory } from './in-memory.ts';
import { renderedAfter, type ExtractContext } from '../renderings/rendered.ts';
import { answerRendered } from './rendered-answer.ts';
import { requestConnection } from '../engine/request-connection.ts';
import { copyWholeWindow, fromMemory, wholeWindowPlan } from './whole-window.ts';

/*
 * Extracts: a window's rows, every one counted before the first byte and cut on a time boundary.
 *
 * Glossary:
 * - way: how a response's rows are made (ExtractWay): from the rows cache, read into memory, from
 *   the files' renderings, a whole window copied before answering, or streamed group by group.
 * - group: the partitions of one ordered query, at most GROUP_ROWS rows (plan.ts); groups are
 *   written ahead of a slow reader within EXTRACT_AHEAD_MB (write-ahead.ts).
 * - whole window: one whose files hold no more rows than a group and ROW_LIMIT: neither counted
 *   nor cut, written by COPY before the response starts, in slices side by side (whole-window.ts).
 * - slice: a piece of a window of about equal rows, for one connection (sources/slices.ts).
 * - cut and next: where a window past ROW_LIMIT ends, and where the client continues (plan.ts).
 * - stored order: files whose rows are stored in order key are read without a sort (presorted).
 */

/**
 * Preflight and plan: every check runs and every row is counted before the first byte is sent.
 * Null when `req.isFresh` says the client already holds this version. Six ways out: fresh (304),
 * rows from the cache, a small window's rows from its files' renderings (no connection needed),
 * a small window's rows read into memory, the whole window copied before
 * answering, or groups streamed.
 */
export async function prepareExtract(ctx: ExtractContext, req: ExtractRequest): Promise<Extract | null> {
  const request = requestConnection(ctx.engine, ctx.signal);
  try {
    const sources = await listSources(ctx, req, request.connection, FORMATS[req.format].stationPoints && req.descriptor.geometry.kind === 'station');
    if (req.isFresh?.(sources)) {
      request.release();
      return null;
    }
    const cacheKey = rowsCacheKey(ctx, req, sources);
    const cached = answerFromCache(ctx, cacheKey, sources);
    if (cached) {
      request.release();
      return cached;
    }
    // A request that holds a connection already (its files' checks needed one) never waits for a rendering: the old way is at hand.
    const rendered = await answerRendered(ctx, req, sources, cacheKey, !request.held);
    if (rendered) {
      request.release();
      return rendered;
    }
    ctx.signal.throwIfAborted();
    const connection = await request.connection();
    const spec = await querySpec(ctx, req, sources, connection);
    ctx.signal.throwIfAborted();
    const prepared = { ctx, req, sources, spec, connection, release: request.release };
    const whole = wholeWindowPlan(ctx, req, sources);
    if (whole && inMemory(ctx, sources, whole)) return await answerInMemory({ ...prepared, ...whole, cacheKey });
    return whole ? await copyWholeWindow({ ...prepared, ...whole, cacheKey }) : renderedAfter(prepared, await streamGroups(prepared));
  } catch (e) {
    request.release();
    throw e;
  }
}

/** The key of this response's rows in the rows cache: only whole-window formats are cached. */
function rowsCacheKey(ctx: ExtractContext, req: ExtractRequest, sources: Sources): string | null {
  return ctx.rowsCache && req.cacheKey && wholeWindowBody(req.format, req.descriptor) ? req.cacheKey(sources) : null;
}

function answerFromCache(ctx: ExtractContext, cacheKey: string | null, sources: Sources): Extract | null {
  const cached = cacheKey ? ctx.rowsCache?.get(cacheKey) : undefined;
  return cached ? fromMemory(sources, cached, 'cache') : null;
}
