import type { DuckDBConnection, DuckDBMaterializedResult } from '@duckdb/node-api';
import type { Observation } from '../files/chain.ts';
import type { Sources } from '../files/preflight.ts';
import type { AggregateShape } from '../sql/aggregate-shape.ts';
import { aggregateColumns, compileAggregate, type AggregateColumns } from '../sql/compile-aggregate.ts';
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
import { bucketSlices, filesIn, mergedSlices } from './aggregate-slices.ts';
import { mergedGroups } from './aggregate-merge.ts';
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

/** One part's groups, held by DuckDB until they are sent (at most `most` + 1: enough to see a cut, or that there are more). */
async function runAggregate(c: DuckDBConnection, spec: QuerySpec, files: readonly string[], q: { window: Window; labels?: Window; shape: AggregateShape; most: number }): Promise<DuckDBMaterializedResult | null> {
  if (files.length === 0) return null;
  const compiled = compileAggregate({ spec, files, window: q.window, labels: q.labels, shape: q.shape, limit: q.most + 1 });
  return c.run(compiled.sql, compiled.params);
}

/** The parts a window is run in on `n` connections: bucket-aligned (concatenated), or cut inside buckets (`merged`); null: not run. */
type PartPlan = (n: number) => { windows: Window[]; merged: boolean } | null;

/** Parts of the window: cut inside its buckets when they are fewer than the parts it is worth, if `merge`; else bucket-aligned (null if `merge` is 'only'). */
function partPlan(sources: Sources, w: Window, interval: AggregateShape['interval'], merge: boolean | 'only'): PartPlan {
  return (n) => {
    const cut = merge ? mergedSlices(w, sources, n, interval) : null;
    if (cut) return { windows: cut, merged: true };
    return merge === 'only' ? null : { windows: bucketSlices(w, sources, n, interval), merged: false };
  };
}

interface PartsRun {
  results: DuckDBMaterializedResult[];
  merged: boolean;
}

/**
 * The window's groups, computed in parts side by side on the request's connection and the idle
 * ones a large enough window is worth (one statement runs on DUCKDB_THREADS, the cores are used
 * by statements side by side), each giving its first `most` + 1 groups: bucket-aligned parts'
 * groups in order are the window's; parts cut inside a bucket share groups, merged after.
 */
async function runParts(ctx: ExtractContext, c: DuckDBConnection, spec: QuerySpec, sources: Sources, req: AggregateRequest, plan: PartPlan, most: number): Promise<PartsRun | null> {
  const helpers = idleHelpers(ctx.engine, sliceCount(req.window, sources, ctx.connectionsPerExtract) - 1);
  const connections = [c, ...helpers.map((h) => h.connection)];
  // The request's own connection is interrupted by requestConnection on abort; the helpers here.
  const interrupt = () => helpers.forEach((h) => h.connection.interrupt());
  ctx.signal.addEventListener('abort', interrupt);
  try {
    const planned = plan(connections.length);
    if (!planned) return null;
    const labels = planned.merged ? req.window : undefined;
    // The first part to fail says why; the others then fail with the interrupt it sent them.
    let cause: { error: unknown } | null = null;
    const parts = planned.windows.map((w, i) =>
      runAggregate(connections[i]!, spec, filesIn(sources, w), { window: w, labels, shape: req.shape, most }).catch((e: unknown) => {
        cause ??= { error: e };
        connections.forEach((other, j) => j !== i && other.interrupt());
        throw e;
      }),
    );
    // Every part is awaited before the helpers go back: none is mid-statement then.
    const settled = await Promise.allSettled(parts);
    if (cause) throw (cause as { error: unknown }).error;
    return { results: settled.flatMap((p) => (p.status === 'fulfilled' && p.value ? [p.value] : [])), merged: planned.merged };
  } finally {
    ctx.signal.removeEventListener('abort', interrupt);
    helpers.forEach((h) => h.release());
  }
}

/** A run's groups: merged when its parts were cut inside buckets (null: more than `most`, short of the limit), else concatenated. */
function groupsOfRun(run: PartsRun, req: AggregateRequest, cols: AggregateColumns, most: number): Groups | null {
  const { results } = run;
  if (run.merged) return mergedGroups(results, { shape: req.shape, cols, window: req.window, rowLimit: req.rowLimit, most });
  return resultGroups(results, req.rowLimit, req.window, chunkReader(results[0]?.columnNames() ?? [], req.shape, cols));
}

/** The window's groups: held by DuckDB until sent when they are few, spooled to TEMP_DIR when they may be many. */
async function groupsOf(ctx: ExtractContext, c: DuckDBConnection, spec: QuerySpec, sources: Sources, req: AggregateRequest, columns: AggregateColumn[]): Promise<Groups> {
  const cols = aggregateColumns({ spec, shape: req.shape });
  const run = (w: Window, merge: boolean | 'only', most: number) => runParts(ctx, c, spec, sources, { ...req, window: w }, partPlan(sources, w, req.shape.interval, merge), most);
  if (spoolsGroups(sources, req.window, ctx.aggregateSpoolRows)) {
    const held = async (w: Window) => (await run(w, false, req.rowLimit))!.results;
    // A window of fewer buckets than parts, in parts merged: held if few groups, else (null) spooled as one part.
    const split = async (w: Window, most: number) => {
      const parts = await run(w, 'only', most);
      return parts && groupsOfRun(parts, { ...req, window: w }, cols, most);
    };
    return spooledGroups(ctx, c, { spec, sources, window: req.window, shape: req.shape, rowLimit: req.rowLimit, columns, cols }, { held, split });
  }
  const parts = (await run(req.window, true, req.rowLimit))!;
  // An interrupt that reached the statement while it was being prepared is lost: look again.
  ctx.signal.throwIfAborted();
  return groupsOfRun(parts, req, cols, req.rowLimit)!;
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
