import type { DuckDBConnection } from '@duckdb/node-api';
import type { Observation } from '../files/chain.ts';
import type { Sources } from '../sources/preflight.ts';
import type { AggregateShape } from './aggregate-shape.ts';
import { aggregateColumns, type AggregateColumns } from './compile-aggregate.ts';
import type { QuerySpec } from '../sql/compile.ts';
import type { Window } from '../window.ts';
import { aggregateColumnList, chunkReader, type AggregateColumn } from './aggregate-rows.ts';
import { resultGroups, type Groups } from './aggregate-groups.ts';
import { listSources, querySpec } from '../sources/request-sources.ts';
import type { ExtractRequest } from '../sources/context.ts';
import { verifierOf } from '../sources/listed-files.ts';
import { AGGREGATE_WRITERS } from './write/aggregate-writers.ts';
import { cachedGroups, keepGroups } from './aggregate-cache.ts';
import { aggregateParquet } from './write/aggregate-parquet.ts';
import { hasGroupGeometry } from './write/aggregate-geometry.ts';
import { partPlan, runParts, type PartsRun } from './aggregate-parts.ts';
import { mergedGroups } from './aggregate-merge.ts';
import { requestConnection } from '../engine/request-connection.ts';
import { rowsIn } from '../sources/slices.ts';
import { spooledGroups, spoolsGroups } from './spool/aggregate-spooled.ts';
import type { AggregateContext } from './aggregate-split-memo.ts';

/*
 * Aggregates: groups of a window's rows by time bucket and keys, with exact statistics.
 *
 * Glossary (one meaning each, in the whole of queries/):
 * - bucket: the UTC hour, day, ISO week, month or year a row falls in (`all`: the window); its
 *   start labels the group. Bucket time lives in buckets.ts alone.
 * - group: one answer row: a bucket, the key values, the statistics.
 * - part: a piece of the window run as one statement on one connection. Bucket-aligned parts'
 *   groups are concatenated; parts cut inside a bucket share groups, which are merged
 *   (aggregate-merge.ts). Which of the two a one-bucket window gets is remembered per shape
 *   (aggregate-split-memo.ts: "split" is a window cut inside its buckets).
 * - queue: the parts one connection runs in turn (aggregate-parts.ts); the first may be a probe,
 *   the first rows alone, to learn early whether a merge would hold too many groups.
 * - held groups: kept in DuckDB's results (or, few, in memory) until sent; spooled groups:
 *   written to TEMP_DIR in the codec's bytes (spool/) and read back once.
 * - facts: what the file checks found of a file (FileFacts: measures wholly in the common lane,
 *   positions inside the grid); FilesFacts: those that hold for every file a statement reads,
 *   which spare the statement a test a row.
 * - common lane, halves, pair, rare values: the exact sums' terms (exact/exact-sum-sql.ts): the
 *   common lane is the binary exponents nearly every value has, summed in a statement as two
 *   64-bit halves, its total sent as three exact doubles (a pair below 2^92); the rare values, the
 *   others, are sent as a group's list and added exactly in JavaScript (exact/exact-sum.ts).
 */

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

/** A run's groups: merged when its parts were cut inside buckets (null: more than `most`, short of the limit), else concatenated. */
function groupsOfRun(run: PartsRun, req: AggregateRequest, cols: AggregateColumns, most: number): Groups | null {
  const { results } = run;
  if (run.over) return null;
  if (run.merged) return mergedGroups(results, { shape: req.shape, cols, window: req.window, rowLimit: req.rowLimit, most });
  return resultGroups(results, req.rowLimit, req.window, chunkReader(results[0]?.columnNames() ?? [], req.shape, cols));
}

/** The window's groups: held by DuckDB until sent when they are few, spooled to TEMP_DIR when they may be many. */
async function groupsOf(ctx: AggregateContext, c: DuckDBConnection, spec: QuerySpec, sources: Sources, req: AggregateRequest, columns: AggregateColumn[]): Promise<Groups> {
  const cols = aggregateColumns({ spec, shape: req.shape });
  // A merge that may give up (more groups than `most`, short of the limit), `watched` from a first piece on: a sixteenth
  // of the window, and at least twice `most` rows (fewer cannot have more groups than `most`; twice can).
  const probe = (w: Window, most: number) => {
    const rows = rowsIn(sources, w);
    return most < req.rowLimit && rows > most ? Math.max(rows / 16, 2 * most) : null;
  };
  const run = (w: Window, merge: boolean | 'only', most: number, watched = false) =>
    runParts(ctx, c, spec, sources, { ...req, window: w }, partPlan(sources, w, req.shape.interval, merge, watched ? probe(w, most) : null), most);
  if (spoolsGroups(sources, req.window, ctx.aggregateSpoolRows)) {
    const held = async (w: Window) => (await run(w, false, req.rowLimit))!.results;
    // A window of fewer buckets than parts, in parts merged: held if few groups, else (null) spooled as one part.
    const split = async (w: Window, most: number, watched: boolean) => {
      const parts = await run(w, 'only', most, watched);
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
async function computeGroups(ctx: AggregateContext, req: AggregateRequest, sources: Sources, connection: DuckDBConnection, key: string | null): Promise<Groups> {
  const spec = await querySpec(ctx, req, sources, connection);
  ctx.signal.throwIfAborted();
  const files = sources.partitions.flatMap((p) => p.files.map((f) => f.path));
  const columns = aggregateColumnList(req.shape);
  const groups = await groupsOf(ctx, connection, spec, sources, req, columns);
  try {
    await verifierOf(req.descriptor.name, sources)(files);
    // Checked before the first byte: spooled groups kept as they are read are of these files.
    return keepGroups(ctx.aggregateCache, key, groups, columns, sources.dataVersion);
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
export async function prepareAggregate(ctx: AggregateContext, req: AggregateRequest): Promise<Aggregate | null> {
  const request = requestConnection(ctx.engine, ctx.signal);
  try {
    const needsStations = req.format !== 'csv' && req.shape.keys.some((k) => k.kind === 'station');
    const sources = await listSources(ctx, req, request.connection, needsStations);
    if (req.isFresh?.(sources)) return null;
    const { observation, dataVersion, folderValue, correction } = sources;
    const decided = { observation, dataVersion, folderValue, correction, columns: aggregateColumnList(req.shape) };
    const key = req.cacheKey ? req.cacheKey(sources) : null;
    const cached = cachedGroups(ctx.aggregateCache, key, decided.columns);
    // A Parquet file carries the chain's last success, which no entity tag covers: written afresh, from cached groups too.
    const parquet = AGGREGATE_WRITERS[req.format].kind === 'parquet';
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
