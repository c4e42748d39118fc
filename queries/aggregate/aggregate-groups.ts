import type { DuckDBDataChunk, DuckDBMaterializedResult } from '@duckdb/node-api';
import type { Instant } from '../instant.ts';
import type { Window } from '../window.ts';
import type { AggregateRow } from './aggregate-rows.ts';
import { bucketRuns } from './buckets.ts';

/** An aggregate's groups as the response sends them: how many, whether and where they were cut, and the groups themselves. */
export interface Groups {
  returned: number;
  truncated: boolean;
  next: Window | null;
  /** The `returned` groups in order, a batch at a time; each call reads them afresh, unless `once`. */
  batches(): Iterable<AggregateRow[]>;
  /** The groups can be read only once (spooled to a temp file that goes when they have been read). */
  once?: boolean;
  /** Gives back the temp files and space of groups that may never be read (idempotent): called once the response closes, however it ends. */
  release?(): void;
}

/** Groups held as rows (a cached answer). */
export const heldGroups = (rows: AggregateRow[], truncated: boolean, next: Window | null): Groups => ({ returned: rows.length, truncated, next, batches: () => [rows] });


/**
 * Where the groups past the row limit are cut, from the buckets' runs of groups in order alone:
 * before the first bucket that does not fit whole, so a walk from `next.from` sees each group
 * once; a first bucket with more groups than the limit is cut inside it and cannot be continued
 * (`next` null), as rows sharing one instant are.
 */
export function cutOfRuns(runs: Iterable<readonly [Instant, number]>, limit: number, to: Instant): Omit<Groups, 'batches'> {
  let seen = 0;
  for (const [bucket, groups] of runs) {
    if (seen + groups > limit) return seen === 0 ? { returned: limit, truncated: true, next: null } : { returned: seen, truncated: true, next: { from: bucket, to } };
    seen += groups;
  }
  return { returned: seen, truncated: false, next: null };
}

/** Each group's bucket in the results (the first column, epoch µs), in order: a bucket never spans two parts. */
function* bucketsIn(results: readonly DuckDBMaterializedResult[]): Generator<Instant> {
  for (const r of results) for (let i = 0, chunks = r.chunkCount; i < chunks; i++) yield* r.getChunk(i).getColumnValues(0) as bigint[];
}

/**
 * The parts' results, kept by DuckDB in its columnar chunks (outside the JavaScript heap), read a
 * chunk at a time as rows and only as far as the groups sent. Ending short of them would send a
 * complete-looking body that lacks groups: it throws instead, and the transfer is cut.
 */
export function resultGroups(results: readonly DuckDBMaterializedResult[], limit: number, w: Window, read: (chunk: DuckDBDataChunk) => AggregateRow[]): Groups {
  const total = results.reduce((n, r) => n + r.rowCount, 0);
  const decided = total <= limit ? { returned: total, truncated: false, next: null } : cutOfRuns(bucketRuns(bucketsIn(results)), limit, w.to);
  function* batches(): Generator<AggregateRow[]> {
    let left = decided.returned;
    for (const r of results) {
      for (let i = 0, chunks = r.chunkCount; i < chunks && left > 0; i++) {
        const rows = read(r.getChunk(i));
        const kept = rows.length > left ? rows.slice(0, left) : rows;
        left -= kept.length;
        yield kept;
      }
    }
    if (left > 0) throw new Error(`the aggregate's results held ${decided.returned - left} of the ${decided.returned} groups sent`);
  }
  return { ...decided, batches };
}
