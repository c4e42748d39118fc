import type { DuckDBConnection, DuckDBMaterializedResult } from '@duckdb/node-api';
import type { Sources } from '../sources/preflight.ts';
import type { AggregateShape } from './aggregate-shape.ts';
import { compileAggregate, type FilesFacts } from './compile-aggregate.ts';
import type { QuerySpec } from '../sql/compile.ts';
import type { Window } from '../window.ts';
import { bucketSlices, filesIn, mergedSlices, probedQueues, factsFor } from './aggregate-slices.ts';
import type { AggregateContext } from './aggregate-split-memo.ts';
import type { QueryContext } from '../sources/context.ts';
import { sideBySide, withIdleHelpers } from '../engine/request-connection.ts';
import { sliceCount } from '../sources/slices.ts';

/** The part of a request the parts are run for. */
export interface PartsRequest {
  window: Window;
  shape: AggregateShape;
  /** Most groups one response holds (AGGREGATE_ROW_LIMIT). */
  rowLimit: number;
}

/** One part's groups, held by DuckDB until they are sent (at most `most` + 1: enough to see a cut, or that there are more). */
async function runAggregate(c: DuckDBConnection, spec: QuerySpec, files: readonly string[], q: { window: Window; labels?: Window; shape: AggregateShape; most: number; facts: FilesFacts }): Promise<DuckDBMaterializedResult | null> {
  if (files.length === 0) return null;
  const compiled = compileAggregate({ spec, files, window: q.window, labels: q.labels, shape: q.shape, limit: q.most + 1, facts: q.facts });
  return c.run(compiled.sql, compiled.params);
}

/** The parts a window is run in on `n` connections, those of each connection in turn: bucket-aligned (concatenated), or cut inside buckets (`merged`); null: not run. */
export type PartPlan = (n: number) => { queues: Window[][]; merged: boolean } | null;

/**
 * Parts of the window: cut inside its buckets when they are fewer than the parts it is worth, if
 * `merge`, the first part's first rows alone first when the merge may give up (`probe`: twice the
 * groups it holds); else bucket-aligned (null if `merge` is 'only').
 */
export function partPlan(sources: Sources, w: Window, interval: AggregateShape['interval'], merge: boolean | 'only', probe: number | null): PartPlan {
  return (n) => {
    const cut = merge ? mergedSlices(w, sources, n, interval) : null;
    if (cut) return { queues: probe === null ? cut.map((p) => [p]) : probedQueues(cut, sources, probe), merged: true };
    return merge === 'only' ? null : { queues: bucketSlices(w, sources, n, interval).map((p) => [p]), merged: false };
  };
}

export interface PartsRun {
  results: DuckDBMaterializedResult[];
  merged: boolean;
  /** A part cut inside a bucket had more than `most` groups alone, short of the limit: the merge would give up, the run was stopped, no result kept. */
  over: boolean;
}

type Part = (c: DuckDBConnection, w: Window) => Promise<DuckDBMaterializedResult | null>;

/**
 * Each queue's windows in turn on its connection, the queues side by side, their results in order.
 * The first part to fail says why and interrupts the others. Once a part's result is `tooMany`,
 * the others are interrupted and the parts not started are not run: `over`, and `stopped` if that
 * cut any part short.
 */
async function runQueues(connections: readonly DuckDBConnection[], queues: readonly (readonly Window[])[], part: Part, signal: AbortSignal, tooMany: (r: DuckDBMaterializedResult) => boolean): Promise<{ results: DuckDBMaterializedResult[]; over: boolean; stopped: boolean }> {
  let [over, stopped, failed] = [false, false, false];
  const queue = async (c: DuckDBConnection, i: number) => {
    const out: DuckDBMaterializedResult[] = [];
    for (const w of queues[i]!) {
      stopped ||= over;
      if (over || failed) return out;
      // No part starts once the client has gone.
      signal.throwIfAborted();
      const r = await part(c, w);
      if (r) out.push(r);
      if (r && !over && tooMany(r)) {
        over = true;
        connections.forEach((other) => other !== c && other.interrupt());
      }
    }
    return out;
  };
  // After a part had too many groups, the others end by its interrupt: not a failure.
  const expected = (c: DuckDBConnection, i: number) =>
    queue(c, i).catch((e: unknown) => {
      failed ||= !over;
      if (!over) throw e;
      stopped = true;
      return [];
    });
  const results = await sideBySide(connections, queues.length, expected);
  return { results: results.flat(), over, stopped };
}

/**
 * The window's groups, computed in parts side by side on the request's connection and the idle
 * ones a large enough window is worth (one statement runs on DUCKDB_THREADS, the cores are used
 * by statements side by side), each giving its first `most` + 1 groups: bucket-aligned parts'
 * groups in order are the window's; parts cut inside a bucket share groups, merged after. Once a
 * part cut inside a bucket has more than `most` groups short of the limit, the merge would give
 * up: the run stops there.
 */
export async function runParts(ctx: AggregateContext, c: DuckDBConnection, spec: QuerySpec, sources: Sources, req: PartsRequest, plan: PartPlan, most: number): Promise<PartsRun | null> {
  return withIdleHelpers(ctx.engine, c, sliceCount(req.window, sources, ctx.connectionsPerExtract), ctx.signal, async (connections) => {
    const planned = plan(connections.length);
    if (!planned) return null;
    const labels = planned.merged ? req.window : undefined;
    const part: Part = (x, w) => {
      const files = filesIn(sources, w);
      return runAggregate(x, spec, files, { window: w, labels, shape: req.shape, most, facts: factsFor(sources, files) });
    };
    const givesUp = planned.merged && most < req.rowLimit;
    const run = await runQueues(connections, planned.queues, part, ctx.signal, (r) => givesUp && r.rowCount > most);
    if (run.stopped) ctx.splitMemo.stopped();
    return { results: run.over ? [] : run.results, merged: planned.merged, over: run.over };
  });
}
