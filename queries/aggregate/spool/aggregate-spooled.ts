import type { DuckDBConnection, DuckDBMaterializedResult } from '@duckdb/node-api';
import type { Sources } from '../../sources/preflight.ts';
import type { Instant } from '../../instant.ts';
import type { AggregateShape } from '../aggregate-shape.ts';
import { compileAggregate, type AggregateColumns } from '../compile-aggregate.ts';
import type { Compiled, QuerySpec } from '../../sql/compile.ts';
import type { Window } from '../../window.ts';
import { cutOfRuns, heldGroups, resultGroups, type Groups } from '../aggregate-groups.ts';
import { chunkReader, chunkVisitor, type AggregateColumn } from '../aggregate-rows.ts';
import { bucketSlices, filesIn, factsFor } from '../aggregate-slices.ts';
import { rowsIn } from '../../sources/slices.ts';
import { Spool, spoolChunks, spoolPart, type SpooledPart } from './aggregate-spool.ts';
import { readSpool } from './aggregate-spool-read.ts';
import type { QueryContext } from '../../sources/context.ts';
import { sideBySide, withIdleHelpers } from '../../engine/request-connection.ts';
import { shapeKey, type AggregateContext } from '../aggregate-split-memo.ts';
import { bucketRuns } from '../buckets.ts';

/** Window rows (footer counts, a bound on its groups) from which groups may be spooled to TEMP_DIR, not held by DuckDB until sent: any answer of many groups is, a small one keeps no temp file (AGGREGATE_SPOOL_ROWS's default). */
export const SPOOL_ROWS = 20_000;
/**
 * The size a spooled window is handled in (AGGREGATE_SPOOL_GROUPS's default), one size for four
 * roles: the rows the first part's statement reads, about (a part is at least one bucket); the
 * groups a window may have, as its first part tells, and still be held by DuckDB until sent; the
 * groups each further part holds, about (its hash table, sort and result are bounded by them); the
 * most groups of a spooled answer read back into memory at once, as held groups (the rows cache may
 * keep it).
 */
export const SPOOL_GROUPS = 20_000;
const spoolGroups = (ctx: AggregateContext) => ctx.aggregateSpoolGroups ?? SPOOL_GROUPS;

export interface SpooledQuery {
  spec: QuerySpec;
  sources: Sources;
  window: Window;
  shape: AggregateShape;
  rowLimit: number;
  columns: AggregateColumn[];
  cols: AggregateColumns;
}

/** A window's groups held (aggregate.ts): bucket-aligned parts' results in order; or, cut inside fewer buckets than parts, merged (null: more than `most` groups, or not cut; `watched`: stopped once a part alone has more). */
export interface HeldParts {
  held(w: Window): Promise<DuckDBMaterializedResult[]>;
  split(w: Window, most: number, watched: boolean): Promise<Groups | null>;
}

/** Whether a window's groups are spooled (at least `from` rows; 0: never) or held (fewer). */
export const spoolsGroups = (sources: Sources, w: Window, from = SPOOL_ROWS): boolean => from > 0 && rowsIn(sources, w) >= from;


/** Groups before part `i`, once every part before it is spooled (null until then). */
function before(parts: readonly (SpooledPart | null | undefined)[], i: number): number | null {
  let rows = 0;
  for (let j = 0; j < i; j++) {
    const p = parts[j];
    if (p === undefined) return null;
    rows += p?.rows ?? 0;
  }
  return rows;
}

/**
 * `windows` spooled a few at a time (the request's connection and the idle ones), each part's
 * groups as it ends, after the `done` ones; parts past a cut already seen are not run. The first
 * part to fail says why and interrupts the others.
 */
async function spoolParts(ctx: QueryContext, c: DuckDBConnection, q: SpooledQuery, spool: Spool, done: SpooledPart[], windows: readonly Window[]): Promise<(SpooledPart | null)[]> {
  return withIdleHelpers(ctx.engine, c, Math.min(windows.length, ctx.connectionsPerExtract), ctx.signal, async (connections) => {
    const parts: (SpooledPart | null | undefined)[] = [...done, ...windows.map(() => undefined)];
    let [next, failed] = [0, false];
    const work = async (connection: DuckDBConnection) => {
      try {
        while (next < windows.length && !failed) {
          // No part starts once the client has gone.
          ctx.signal.throwIfAborted();
          const i = next++;
          const skip = (before(parts, done.length + i) ?? 0) > q.rowLimit;
          parts[done.length + i] = skip ? null : await spoolWindow(connection, q, spool, windows[i]!);
        }
      } catch (e) {
        failed = true;
        throw e;
      }
    };
    await sideBySide(connections, connections.length, work);
    return parts.map((p) => p ?? null);
  });
}

/** One window's statement (null: no file in it). */
function statementOf(q: SpooledQuery, w: Window): Compiled | null {
  const files = filesIn(q.sources, w);
  return files.length === 0 ? null : compileAggregate({ spec: q.spec, files, window: w, shape: q.shape, limit: q.rowLimit + 1, facts: factsFor(q.sources, files) });
}

/** One window's groups into the spool (null: no file in it). */
async function spoolWindow(c: DuckDBConnection, q: SpooledQuery, spool: Spool, w: Window): Promise<SpooledPart | null> {
  const statement = statementOf(q, w);
  return statement && spoolPart(c, statement, spool, q.columns, (names) => chunkVisitor(names, q.shape, q.cols));
}

/**
 * The window's groups, in parts of about `size` (spoolGroups). The first bucket-aligned part, of about `size` rows, is run alone and
 * tells how many groups a row makes here; the files' footer counts tell how many rows the rest
 * has. When the whole window then looks to have at most `size` groups, the rest is run as a
 * small window is (`held`: its groups held by DuckDB); otherwise the first part's groups are
 * spooled and the rest is cut into parts of about `size` groups at that rate, spooled too.
 * A first part that is the whole window (its buckets cannot be cut) is first run cut inside
 * them on idle connections and merged, kept when that gives at most `size` groups (the parts
 * stopped once one alone has more, unless the shape's rates say they fit); either way the rate is
 * remembered, and the shape's next window its whole rate puts past them is not cut.
 */
async function groupsOf(ctx: AggregateContext, c: DuckDBConnection, q: SpooledQuery, spool: Spool, { held, split }: HeldParts): Promise<Groups | SpooledPart[]> {
  const size = spoolGroups(ctx);
  const rows = (w: Window) => rowsIn(q.sources, w);
  const first = bucketSlices(q.window, q.sources, Math.max(1, Math.ceil(rows(q.window) / size)), q.shape.interval)[0]!;
  const rest = first.to < q.window.to ? { from: first.to, to: q.window.to } : null;
  const shape = rest ? null : shapeKey(q.spec, q.shape);
  const most = Math.min(q.rowLimit, size);
  const merged = shape && (await ctx.splitMemo.mergedIfWorthIt(shape, rows(q.window), most, (watched) => split(q.window, most, watched)));
  ctx.signal.throwIfAborted();
  if (merged) return merged;
  const statement = statementOf(q, first);
  const probe = statement && (await c.run(statement.sql, statement.params));
  ctx.signal.throwIfAborted();
  // A first part without rows tells nothing: one group a row, the most there can be.
  const perRow = rows(first) >= 1 ? (probe?.rowCount ?? 0) / rows(first) : 1;
  // The whole window's rate, remembered: the shape's next window of as many groups is not cut.
  if (shape) ctx.splitMemo.rememberRate(shape, perRow);
  const expected = (probe?.rowCount ?? 0) + (rest ? rows(rest) * perRow : 0);
  if (expected <= size) {
    const results = [...(probe ? [probe] : []), ...(rest ? await held(rest) : [])];
    return resultGroups(results, q.rowLimit, q.window, chunkReader(results[0]?.columnNames() ?? [], q.shape, q.cols));
  }
  const read = (names: readonly string[]) => chunkVisitor(names, q.shape, q.cols);
  let i = 0;
  const done = probe ? [await spoolChunks(probe.columnNames(), async () => (i < probe.chunkCount ? probe.getChunk(i++) : null), spool, q.columns, read)] : [];
  if (!rest) return done;
  const n = Math.max(ctx.connectionsPerExtract, Math.ceil((rows(rest) * perRow) / size));
  return (await spoolParts(ctx, c, q, spool, done, bucketSlices(rest, q.sources, n, q.shape.interval))).filter((p): p is SpooledPart => p !== null);
}

/**
 * The window's groups spooled to TEMP_DIR (within TEMP_DIR_MAX_MB: a 503 when full), so that
 * memory does not grow with their number; the cut is found from each bucket's count. Read back
 * once, as they are sent (a few read into memory at once); the temp files go when that read ends,
 * when the request is aborted, when anything fails before, or when the groups are released.
 */
export async function spooledGroups(ctx: AggregateContext, c: DuckDBConnection, q: SpooledQuery, held: HeldParts): Promise<Groups> {
  const spool = new Spool({ dir: ctx.tempDir, budget: ctx.tempBudget, signal: ctx.signal });
  const dispose = () => {
    ctx.signal.removeEventListener('abort', dispose);
    spool.dispose();
  };
  ctx.signal.addEventListener('abort', dispose, { once: true });
  try {
    const parts = await groupsOf(ctx, c, q, spool, held);
    ctx.signal.throwIfAborted();
    if (!Array.isArray(parts)) {
      dispose();
      return parts;
    }
    const decided = cutOfRuns(bucketRuns(parts.flatMap((p) => p?.runs ?? [])), q.rowLimit, q.window.to);
    if (decided.returned <= spoolGroups(ctx)) {
      const rows = [...readSpool(spool, parts, q.columns, decided.returned)].flat();
      dispose();
      return heldGroups(rows, decided.truncated, decided.next);
    }
    // Groups never read (a HEAD, a failure before the body) keep their files until released.
    return { ...decided, once: true, batches: () => readSpool(spool, parts, q.columns, decided.returned), release: dispose };
  } catch (e) {
    dispose();
    throw e;
  }
}
