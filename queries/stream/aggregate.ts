import type { DuckDBConnection } from '@duckdb/node-api';
import type { Observation } from '../files/chain.ts';
import type { Sources } from '../files/preflight.ts';
import type { AggregateShape } from '../sql/aggregate-shape.ts';
import { aggregateColumns, compileAggregate } from '../sql/compile-aggregate.ts';
import type { QuerySpec } from '../sql/compile.ts';
import type { Window } from '../window.ts';
import { aggregateColumnList, readAggregateRow, type AggregateColumn, type AggregateRow } from './aggregate-rows.ts';
import { listSources, querySpec } from './extract.ts';
import type { ExtractContext, ExtractRequest } from './extract-types.ts';
import { verifierOf } from './listed-files.ts';
import { FORMATS } from '../formats.ts';
import { cachedGroups, keepGroups } from './aggregate-cache.ts';
import { aggregateParquet } from './aggregate-parquet.ts';
import { bucketSlices, filesIn } from './aggregate-slices.ts';
import { idleHelpers, requestConnection } from './request-connection.ts';
import { sliceCount } from './slices.ts';

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
  rows: AggregateRow[];
  truncated: boolean;
  next: Window | null;
  /** The whole body when the format is a file DuckDB writes (Parquet); null otherwise. */
  file: Buffer | null;
}

/**
 * Past the row limit the groups are cut before the first bucket that does not fit whole, so a walk
 * from `next.from` sees each group once; a first bucket with more groups than the limit is cut
 * inside it and cannot be continued (`next` null), as rows sharing one instant are.
 */
function cut(rows: AggregateRow[], limit: number, w: Window): Pick<Aggregate, 'rows' | 'truncated' | 'next'> {
  if (rows.length <= limit) return { rows, truncated: false, next: null };
  const first = rows[limit]!.values[0] as bigint;
  const whole = rows.filter((r) => (r.values[0] as bigint) < first);
  if (whole.length === 0) return { rows: rows.slice(0, limit), truncated: true, next: null };
  return { rows: whole, truncated: true, next: { from: first, to: w.to } };
}

async function runAggregate(c: DuckDBConnection, spec: QuerySpec, files: readonly string[], req: Pick<AggregateRequest, 'window' | 'shape' | 'rowLimit'>): Promise<AggregateRow[]> {
  if (files.length === 0) return [];
  const query = { spec, files, window: req.window, shape: req.shape, limit: req.rowLimit + 1 };
  const compiled = compileAggregate(query);
  const cols = aggregateColumns(query);
  const result = await c.runAndReadAll(compiled.sql, compiled.params);
  const at = new Map(result.columnNames().map((name, i) => [name, i]));
  // Rows as arrays, read by name through one index: a third of the cost of row objects.
  return result.getRows().map((r) => readAggregateRow((name) => r[at.get(name) ?? -1], req.shape, cols));
}

/**
 * The window's groups, computed in bucket-aligned parts side by side on the request's connection
 * and the idle ones a large enough window is worth (one statement runs on DUCKDB_THREADS, the
 * cores are used by statements side by side); each group lies in one part, so the parts'
 * groups in order are the window's, the same whatever the number of parts.
 */
async function runParts(ctx: ExtractContext, c: DuckDBConnection, spec: QuerySpec, sources: Sources, req: AggregateRequest): Promise<AggregateRow[]> {
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
    return settled.flatMap((p) => (p.status === 'fulfilled' ? p.value : []));
  } finally {
    ctx.signal.removeEventListener('abort', interrupt);
    helpers.forEach((h) => h.release());
  }
}

/**
 * The same preflight as an extract (files listed, checked, fingerprinted: a 503 before any byte,
 * an empty window a 200), then the statements of the window's parts, the files checked unchanged
 * after them, and for Parquet the file written; groups asked for again come from the rows cache
 * (RESPONSE_CACHE_MB) without a connection. Null when `req.isFresh` says the client holds this
 * version (304).
 */
export async function prepareAggregate(ctx: ExtractContext, req: AggregateRequest): Promise<Aggregate | null> {
  const request = requestConnection(ctx.engine, ctx.signal);
  try {
    const needsStations = req.format === 'geojson' && req.shape.keys.some((k) => k.kind === 'station');
    const sources = await listSources(ctx, req, request.connection, needsStations);
    if (req.isFresh?.(sources)) return null;
    const { observation, dataVersion, folderValue, correction } = sources;
    const decided = { observation, dataVersion, folderValue, correction, columns: aggregateColumnList(req.shape) };
    // A Parquet file carries the chain's last success, which no entity tag covers: written afresh.
    const key = FORMATS[req.format].aggregate?.kind !== 'parquet' && req.cacheKey ? req.cacheKey(sources) : null;
    const cached = cachedGroups(ctx.rowsCache, key);
    if (cached) return { ...decided, ...cached, file: null };
    const connection = await request.connection();
    const spec = await querySpec(ctx, req, sources, connection);
    ctx.signal.throwIfAborted();
    const files = sources.partitions.flatMap((p) => p.files.map((f) => f.path));
    const rows = await runParts(ctx, connection, spec, sources, req);
    // An interrupt that reached the statement while it was being prepared is lost: look again.
    ctx.signal.throwIfAborted();
    await verifierOf(req.descriptor.name, sources)(files);
    const answer = { ...decided, ...cut(rows, req.rowLimit, req.window) };
    keepGroups(ctx.rowsCache, key, { rows: answer.rows, truncated: answer.truncated, next: answer.next }, dataVersion);
    const parquet = FORMATS[req.format].aggregate?.kind === 'parquet';
    return { ...answer, file: parquet ? await aggregateParquet(connection, { dir: ctx.tempDir, budget: ctx.tempBudget }, req.fileMetadata(answer), answer.columns, answer.rows) : null };
  } finally {
    request.release();
  }
}
