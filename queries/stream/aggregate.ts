import type { DuckDBConnection, DuckDBMaterializedResult } from '@duckdb/node-api';
import type { Observation } from '../files/chain.ts';
import type { Sources } from '../files/preflight.ts';
import type { AggregateShape } from '../sql/aggregate-shape.ts';
import { aggregateColumns, compileAggregate } from '../sql/compile-aggregate.ts';
import type { QuerySpec } from '../sql/compile.ts';
import type { Window } from '../window.ts';
import { aggregateColumnList, chunkReader, type AggregateColumn } from './aggregate-rows.ts';
import { resultGroups, type Groups } from './aggregate-groups.ts';
import { listSources, querySpec } from './extract.ts';
import type { ExtractContext, ExtractRequest } from './extract-types.ts';
import { verifierOf } from './listed-files.ts';
import { FORMATS } from '../formats.ts';
import { cachedGroups, keepGroups } from './aggregate-cache.ts';
import { aggregateParquet } from './aggregate-parquet.ts';
import { hasGroupGeometry } from './aggregate-geometry.ts';
import { bucketSlices, filesIn } from './aggregate-slices.ts';
import { idleHelpers, requestConnection } from './request-connection.ts';
import { sliceCount } from './slices.ts';
import { spooledGroups, spoolsGroups } from './aggregate-spooled.ts';

export interface AggregateRequest extends ExtractRequest {
  window: Window;
  shape: AggregateShape;
  /** Most groups one response holds (AGGREGATE_ROW_LIMIT). */
  rowLimit: number;
  /** The key-value metadata a file of these groups carries (the meta block). */
  fileMetadata(a: Omit<Aggregate, 'file'>): Record<string, string>;
}

/** An aggregate answered: its groups in order, and what the response says about them. */
export interface Aggregate {
  observation: Observation;
  dataVersion: string;
  folderValue: string | null;
  /** The correction model the measures' values are corrected by (the corrected series with a model published); null otherwise. */
  correction: { id: string } | null;
  columns: AggregateColumn[];
  groups: Groups;
  /** The whole body when the format is a file DuckDB writes (Parquet); null otherwise. */
  file: Buffer | null;
}

/** One part's groups, held by DuckDB until they are sent (at most one more than the limit: enough to see a cut). */
async function runAggregate(c: DuckDBConnection, spec: QuerySpec, files: readonly string[], req: Pick<AggregateRequest, 'window' | 'shape' | 'rowLimit'>): Promise<DuckDBMaterializedResult | null> {
  if (files.length === 0) return null;
  const compiled = compileAggregate({ spec, files, window: req.window, shape: req.shape, limit: req.rowLimit + 1 });
  return c.run(compiled.sql, compiled.params);
}

/**
 * The window's groups, computed in bucket-aligned parts side by side on the request's connection
 * and the idle ones a large enough window is worth (one statement runs on DUCKDB_THREADS, the
 * cores are used by statements side by side); each group lies in one part, so the parts'
 * groups in order are the window's, the same whatever the number of parts.
 */
async function runParts(ctx: ExtractContext, c: DuckDBConnection, spec: QuerySpec, sources: Sources, req: AggregateRequest): Promise<DuckDBMaterializedResult[]> {
  const wanted = req.shape.interval === 'all' ? 1 : sliceCount(req.window, sources, ctx.connectionsPerExtract);
  const helpers = idleHelpers(ctx.engine, wanted - 1);
  const connections = [c, ...helpers.map((h) => h.connection)];
  // The request's own connection is interrupted by requestConnection on abort; the helpers here.
  const interrupt = () => helpers.forEach((h) => h.connection.interrupt());
  ctx.signal.addEventListener('abort', interrupt);
  try {
    // The first part to fail says why; the others then fail with the interrupt it sent them.
    let cause: { error: unknown } | null = null;
    const parts = bucketSlices(req.window, sources, connections.length, req.shape.interval).map((w, i) =>
      runAggregate(connections[i]!, spec, filesIn(sources, w), { ...req, window: w }).catch((e: unknown) => {
        cause ??= { error: e };
        connections.forEach((other, j) => j !== i && other.interrupt());
        throw e;
      }),
    );
    // Every part is awaited before the helpers go back: none is mid-statement then.
    const settled = await Promise.allSettled(parts);
    if (cause) throw (cause as { error: unknown }).error;
    return settled.flatMap((p) => (p.status === 'fulfilled' && p.value ? [p.value] : []));
  } finally {
    ctx.signal.removeEventListener('abort', interrupt);
    helpers.forEach((h) => h.release());
  }
}

/** The window's groups: held by DuckDB until sent when they are few, spooled to TEMP_DIR when they may be many. */
async function groupsOf(ctx: ExtractContext, c: DuckDBConnection, spec: QuerySpec, sources: Sources, req: AggregateRequest, columns: AggregateColumn[]): Promise<Groups> {
  const cols = aggregateColumns({ spec, shape: req.shape });
  const held = (w: Window) => runParts(ctx, c, spec, sources, { ...req, window: w });
  if (spoolsGroups(sources, req.window, ctx.aggregateSpoolRows)) return spooledGroups(ctx, c, { spec, sources, window: req.window, shape: req.shape, rowLimit: req.rowLimit, columns, cols }, held);
  const results = await held(req.window);
  // An interrupt that reached the statement while it was being prepared is lost: look again.
  ctx.signal.throwIfAborted();
  return resultGroups(results, req.rowLimit, req.window, chunkReader(results[0]?.columnNames() ?? [], req.shape, cols));
}

/** The window's groups computed on `connection` and its idle helpers, the files checked unchanged after them; kept in the aggregate cache under `key` (spooled groups as they are read). */
async function computeGroups(ctx: ExtractContext, req: AggregateRequest, sources: Sources, connection: DuckDBConnection, key: string | null): Promise<Groups> {
  const spec = await querySpec(ctx, req, sources, connection);
  ctx.signal.throwIfAborted();
  const files = sources.partitions.flatMap((p) => p.files.map((f) => f.path));
  const groups = await groupsOf(ctx, connection, spec, sources, req, aggregateColumnList(req.shape));
  try {
    await verifierOf(req.descriptor.name, sources)(files);
    // Checked before the first byte: spooled groups kept as they are read are of these files.
    return keepGroups(ctx.aggregateCache, key, groups, sources.dataVersion);
  } catch (e) {
    // No response will read these groups: their temp files go now.
    groups.release?.();
    throw e;
  }
}

/**
 * The same preflight as an extract (files listed, checked, fingerprinted: a 503 before any byte,
 * an empty window a 200), then the statements of the window's parts, the files checked unchanged
 * after them, and for Parquet the file written; groups computed before come from the aggregate
 * cache (AGGREGATE_CACHE_MB) without a statement, and without a connection but for Parquet. Null
 * when `req.isFresh` says the client holds this version (304).
 */
export async function prepareAggregate(ctx: ExtractContext, req: AggregateRequest): Promise<Aggregate | null> {
  const request = requestConnection(ctx.engine, ctx.signal);
  try {
    const needsStations = req.format !== 'csv' && req.shape.keys.some((k) => k.kind === 'station');
    const sources = await listSources(ctx, req, request.connection, needsStations);
    if (req.isFresh?.(sources)) return null;
    const { observation, dataVersion, folderValue, correction } = sources;
    const decided = { observation, dataVersion, folderValue, correction, columns: aggregateColumnList(req.shape) };
    const key = req.cacheKey ? req.cacheKey(sources) : null;
    const cached = cachedGroups(ctx.aggregateCache, key);
    // A Parquet file carries the chain's last success, which no entity tag covers: written afresh, from cached groups too.
    const parquet = FORMATS[req.format].aggregate?.kind === 'parquet';
    if (cached && !parquet) return { ...decided, groups: cached, file: null };
    const connection = await request.connection();
    const answer = { ...decided, groups: cached ?? (await computeGroups(ctx, req, sources, connection, key)) };
    if (!parquet) return { ...answer, file: null };
    try {
      return { ...answer, file: await aggregateParquet(connection, { dir: ctx.tempDir, budget: ctx.tempBudget }, req.fileMetadata(answer), answer.columns, answer.groups, hasGroupGeometry(req.shape)) };
    } catch (e) {
      // No response will read these groups: their temp files go now.
      answer.groups.release?.();
      throw e;
    }
  } finally {
    request.release();
  }
}
