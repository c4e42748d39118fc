import type { DuckDBConnection } from '@duckdb/node-api';
import { resolveSources, type Sources } from '../files/preflight.ts';
import { FORMATS, wholeWindowBody } from '../formats.ts';
import type { QuerySpec } from '../sql/compile.ts';
import { resolveShapes } from '../sql/shape-filter.ts';
import { streamGroups } from './extract-stream.ts';
import type { Extract, ExtractContext, ExtractRequest } from './extract-types.ts';
import { answerInMemory, inMemory } from './in-memory.ts';
import { renderedAfter } from './rendered.ts';
import { answerRendered } from './rendered-answer.ts';
import { idleHelpers, requestConnection } from './request-connection.ts';
import { copyWholeWindow, fromMemory, wholeWindowPlan } from './whole-window.ts';

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

/** The files of the window listed, checked and fingerprinted (the stations' too when the response shows their points). */
export function listSources(ctx: ExtractContext, req: ExtractRequest, connection: () => Promise<DuckDBConnection>, needsStations: boolean): Promise<Sources> {
  return resolveSources(
    { dataDir: ctx.dataDir, checker: ctx.checker, connection, nowMs: ctx.nowMs, signal: ctx.signal, borrowIdle: () => idleHelpers(ctx.engine, ctx.connectionsPerExtract - 1), listings: ctx.listings, corrections: ctx.corrections },
    { descriptor: req.descriptor, window: req.window, folderValue: req.folderValue, needsStations, correction: correctionAsked(req) },
  );
}

/** Whether the request asks for the corrected series, and the model it pins. */
function correctionAsked(req: ExtractRequest): { pinned: string | undefined } | null {
  const layer = req.descriptor.correction;
  if (!layer || req.params[layer.series.param] !== layer.series.value) return null;
  return { pinned: req.params[layer.param] };
}

/** The key of this response's rows in the rows cache: only whole-window formats are cached. */
function rowsCacheKey(ctx: ExtractContext, req: ExtractRequest, sources: Sources): string | null {
  return ctx.rowsCache && req.cacheKey && wholeWindowBody(req.format, req.descriptor) ? req.cacheKey(sources) : null;
}

function answerFromCache(ctx: ExtractContext, cacheKey: string | null, sources: Sources): Extract | null {
  const cached = cacheKey ? ctx.rowsCache?.get(cacheKey) : undefined;
  return cached ? fromMemory(sources, cached, 'cache') : null;
}

/** What the query needs, the request's box filters resolved to the shapes they hold. */
export function querySpec(ctx: ExtractContext, req: ExtractRequest, sources: Sources, c: DuckDBConnection): Promise<QuerySpec> {
  const listed: QuerySpec = {
    descriptor: req.descriptor,
    dataDir: ctx.dataDir,
    filters: req.filters,
    params: req.params,
    correction: sources.correction?.model ?? null,
    stationFiles: sources.stationFiles?.map((f) => f.path) ?? null,
  };
  return resolveShapes(c, listed, sources.partitions.flatMap((p) => p.files.map((f) => f.path)), req.window);
}
