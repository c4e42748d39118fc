import type { DuckDBConnection } from '@duckdb/node-api';
import { withIdleHelpers } from '../engine/request-connection.ts';
import type { QuerySpec } from '../sql/compile.ts';
import { resolveShapes } from '../sql/shape-filter.ts';
import type { ExtractRequest, QueryContext } from './context.ts';
import { resolveSources, type Sources } from './preflight.ts';

/** The files of the window listed, checked and fingerprinted (the stations' too when the response shows their points). */
export function listSources(ctx: QueryContext, req: ExtractRequest, connection: () => Promise<DuckDBConnection>, needsStations: boolean): Promise<Sources> {
  return resolveSources(
    { dataDir: ctx.dataDir, checker: ctx.checker, connection, nowMs: ctx.nowMs, signal: ctx.signal, fanOut: (own, run) => withIdleHelpers(ctx.engine, own, ctx.connectionsPerExtract, ctx.signal, run), listings: ctx.listings, corrections: ctx.corrections },
    { descriptor: req.descriptor, window: req.window, folderValue: req.folderValue, needsStations, correction: correctionAsked(req) },
  );
}

/** Whether the request asks for the corrected series, and the model it pins. */
function correctionAsked(req: ExtractRequest): { pinned: string | undefined } | null {
  const layer = req.descriptor.correction;
  if (!layer || req.params[layer.series.param] !== layer.series.value) return null;
  return { pinned: req.params[layer.param] };
}

/** What the query needs, the request's box filters resolved to the shapes they hold. */
export function querySpec(ctx: QueryContext, req: ExtractRequest, sources: Sources, c: DuckDBConnection): Promise<QuerySpec> {
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
