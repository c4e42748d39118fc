import type { DuckDBConnection } from '@duckdb/node-api';
import type { Sources } from '../files/preflight.ts';
import type { Instant } from '../instant.ts';
import type { AggregateShape } from '../sql/aggregate-shape.ts';
import { compileAggregate, type AggregateColumns } from '../sql/compile-aggregate.ts';
import type { QuerySpec } from '../sql/compile.ts';
import type { Window } from '../window.ts';
import { cutOfRuns, heldGroups, type Groups } from './aggregate-groups.ts';
import { chunkVisitor, type AggregateColumn } from './aggregate-rows.ts';
import { bucketSlices, filesIn } from './aggregate-slices.ts';
import { readSpool, Spool, spoolPart, type SpooledPart } from './aggregate-spool.ts';
import type { ExtractContext } from './extract-types.ts';
import { idleHelpers } from './request-connection.ts';
import { estimatedRows } from './slices.ts';

/**
 * Rows in the window (estimated from the files' row counts, an upper bound on its groups) from
 * which its groups are spooled to TEMP_DIR rather than held by DuckDB until sent: small enough
 * that any answer with many groups is spooled, large enough that a small one keeps the one
 * statement per part and no temp file.
 */
export const SPOOL_ROWS = 20_000;
/** Rows one part's statement reads, about, at most: its hash table and sort are bounded by them (a part is at least one bucket). */
const PART_ROWS = 100_000;
/** A spooled answer of at most this many groups is read back into memory at once, as held groups (the rows cache may keep it). */
export const HELD_GROUPS = 20_000;

export interface SpooledQuery {
  spec: QuerySpec;
  sources: Sources;
  window: Window;
  shape: AggregateShape;
  rowLimit: number;
  columns: AggregateColumn[];
  cols: AggregateColumns;
}

/** Whether a window's groups are spooled (many rows) or held (few). */
export const spoolsGroups = (sources: Sources, w: Window): boolean => estimatedRows(sources, w) >= SPOOL_ROWS;

/** The parts' runs of groups per bucket, in order, a bucket's runs in adjacent parts joined. */
function* partRuns(parts: readonly (SpooledPart | null)[]): Generator<[Instant, number]> {
  let run: [Instant, number] | null = null;
  for (const [bucket, groups] of parts.flatMap((p) => p?.runs ?? [])) {
    if (run?.[0] === bucket) run[1] += groups;
    else {
      if (run) yield run;
      run = [bucket, groups];
    }
  }
  if (run) yield run;
}

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
 * The window's groups in bucket-aligned parts of about PART_ROWS rows each, a few at a time (the
 * request's connection and the idle ones), each part's groups spooled as it ends; parts past a cut
 * already seen are not run. The first part to fail says why and interrupts the others.
 */
async function spoolAll(ctx: ExtractContext, c: DuckDBConnection, q: SpooledQuery, spool: Spool): Promise<(SpooledPart | null)[]> {
  const windows = bucketSlices(q.window, q.sources, Math.max(1, Math.ceil(estimatedRows(q.sources, q.window) / PART_ROWS)), q.shape.interval);
  const helpers = idleHelpers(ctx.engine, Math.min(windows.length, ctx.connectionsPerExtract) - 1);
  const connections = [c, ...helpers.map((h) => h.connection)];
  // The request's own connection is interrupted by requestConnection on abort; the helpers here.
  const interrupt = () => helpers.forEach((h) => h.connection.interrupt());
  ctx.signal.addEventListener('abort', interrupt);
  const parts: (SpooledPart | null | undefined)[] = windows.map(() => undefined);
  const read = (names: readonly string[]) => chunkVisitor(names, q.shape, q.cols);
  let [next, failed] = [0, false];
  const work = async (connection: DuckDBConnection) => {
    while (next < windows.length && !failed) {
      const i = next++;
      const files = filesIn(q.sources, windows[i]!);
      const skip = files.length === 0 || (before(parts, i) ?? 0) > q.rowLimit;
      const statement = () => compileAggregate({ spec: q.spec, files, window: windows[i]!, shape: q.shape, limit: q.rowLimit + 1 });
      parts[i] = skip ? null : await spoolPart(connection, { statement: statement(), lanes: q.cols.summed.length }, spool, q.columns, read);
    }
  };
  try {
    const settled = await Promise.allSettled(
      connections.map((x) =>
        work(x).catch((e: unknown) => {
          if (!failed) connections.forEach((other) => other !== x && other.interrupt());
          failed = true;
          throw e;
        }),
      ),
    );
    const failure = settled.find((s) => s.status === 'rejected');
    if (failure) throw failure.reason;
    return parts.map((p) => p ?? null);
  } finally {
    ctx.signal.removeEventListener('abort', interrupt);
    helpers.forEach((h) => h.release());
  }
}

/**
 * The window's groups spooled to TEMP_DIR (within TEMP_DIR_MAX_MB: a 503 when full), so that
 * memory does not grow with their number; the cut is found from each bucket's count. Read back
 * once, as they are sent (a few read into memory at once); the temp files go when that read ends,
 * when the request is aborted, or when anything fails before.
 */
export async function spooledGroups(ctx: ExtractContext, c: DuckDBConnection, q: SpooledQuery): Promise<Groups> {
  const spool = new Spool({ dir: ctx.tempDir, budget: ctx.tempBudget, signal: ctx.signal });
  const dispose = () => void spool.dispose();
  ctx.signal.addEventListener('abort', dispose, { once: true });
  try {
    const parts = (await spoolAll(ctx, c, q, spool)).filter((p): p is SpooledPart => p !== null);
    ctx.signal.throwIfAborted();
    const decided = cutOfRuns(partRuns(parts), q.rowLimit, q.window.to);
    if (decided.returned <= HELD_GROUPS) return heldGroups([...readSpool(spool, parts, q.columns, decided.returned)].flat(), decided.truncated, decided.next);
    return { ...decided, once: true, batches: () => readSpool(spool, parts, q.columns, decided.returned) };
  } catch (e) {
    await spool.dispose();
    throw e;
  }
}
