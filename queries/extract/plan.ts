import type { DuckDBConnection } from '@duckdb/node-api';
import { compileCount, compileCountByFile, compileKeyAt, compileTimeAt, type Compiled, type QuerySpec } from '../sql/compile.ts';
import { formatInstant, type Instant } from '../instant.ts';
import { fingerprint } from '../files/footer.ts';
import type { Partition } from '../files/partitions.ts';
import { modelHashes, type Sources } from '../sources/preflight.ts';
import type { Window } from '../window.ts';
import { DatasetUnavailableError } from '../errors.ts';

export interface Cut {
  returned: number;
  to: Instant | null;
  limit: number | null;
  next: Window | null;
  /**
   * For a keyed cut that ends inside one instant (or in a dataset without time): the order key of
   * the last row sent, where the next page continues (see `CutQuery.keyed`). Absent otherwise.
   */
  lastKey?: readonly string[];
}

async function scalar(c: DuckDBConnection, q: Compiled): Promise<bigint | null> {
  const rows = (await c.runAndReadAll(q.sql, q.params)).getRows();
  const v = rows[0]?.[0];
  return typeof v === 'bigint' ? v : null;
}

export async function countByFile(c: DuckDBConnection, spec: QuerySpec, partitions: readonly Partition[], w: Window | null): Promise<Map<string, number>> {
  const files = partitions.flatMap((p) => p.files.map((f) => f.path));
  if (files.length === 0) return new Map();
  const q = compileCountByFile(spec, files, w?.from ?? null, w?.to ?? null);
  const rows = (await c.runAndReadAll(q.sql, q.params)).getRows();
  return new Map(rows.map((r) => [String(r[0]), Number(r[1])]));
}

export interface CountQuery {
  spec: QuerySpec;
  partitions: readonly Partition[];
  window: Window | null;
  /** Footer rows of each file: an upper bound of what a count of it can find. */
  rowsByFile: ReadonlyMap<string, number>;
  rowLimit: number;
}

/**
 * Rows of each partition in the window, counted in order only until more than `rowLimit` are
 * found: a response is cut before then, so partitions after it are never read (left at 0). Each
 * round takes the partitions whose files could hold the rows still needed, and at least twice as
 * many as the round before (filters may find far fewer rows than the footers hold).
 */
export async function countPartitions(c: DuckDBConnection, q: CountQuery): Promise<number[]> {
  const { partitions: parts, rowsByFile, rowLimit } = q;
  const counts = parts.map(() => 0);
  const bound = (p: Partition) => p.files.reduce((n, f) => n + (rowsByFile.get(f.path) ?? Infinity), 0);
  let [counted, found, round] = [0, 0, 1];
  while (counted < parts.length && found <= rowLimit) {
    let [end, room] = [counted, 0];
    while (end < parts.length && (end - counted < round || room <= rowLimit - found)) room += bound(parts[end++]!);
    const byFile = await countByFile(c, q.spec, parts.slice(counted, end), q.window);
    for (let i = counted; i < end; i++) found += counts[i] = parts[i]!.files.reduce((n, f) => n + (byFile.get(f.path) ?? 0), 0);
    [counted, round] = [end, round * 2];
  }
  return counts;
}

export interface CutQuery {
  spec: QuerySpec;
  partitions: readonly Partition[];
  /** Rows of each partition in the window. */
  counts: readonly number[];
  window: Window | null;
  rowLimit: number;
  /** Also find the order key of the last row when the cut falls inside one instant (keyset paging). */
  keyed?: boolean;
}

/** The order key of the row at `offset` in `files` within `w`, a time as an ISO instant. */
async function keyAt(c: DuckDBConnection, spec: QuerySpec, files: string[], w: Window | null, offset: number): Promise<string[]> {
  const q = compileKeyAt({ spec, files, from: w?.from ?? null, to: w?.to ?? null, offset });
  const row = (await c.runAndReadAll(q.sql, q.params)).getRows()[0];
  // The rows counted are gone: a file changed between the two statements.
  if (!row) throw new DatasetUnavailableError(spec.descriptor.name, 'files changed while they were read');
  const time = spec.descriptor.time?.column;
  return spec.descriptor.orderBy.map((name, i) => (name === time ? formatInstant(BigInt(String(row[i]))) : String(row[i])));
}

/** Where the response ends: all rows, or the rows before the first instant that would exceed the limit. */
export async function findCut(c: DuckDBConnection, q: CutQuery): Promise<Cut> {
  const { spec, partitions: parts, counts, window: w, rowLimit: limit } = q;
  const total = counts.reduce((a, b) => a + b, 0);
  if (total <= limit) return { returned: total, to: w?.to ?? null, limit: null, next: null };
  const allFiles = () => parts.flatMap((p) => p.files.map((f) => f.path));
  if (!w) return { returned: limit, to: null, limit, next: null, ...(q.keyed ? { lastKey: await keyAt(c, spec, allFiles(), null, limit - 1) } : {}) };
  let before = 0;
  let i = 0;
  while (before + counts[i]! <= limit) before += counts[i++]!;
  const files = parts[i]!.files.map((f) => f.path);
  const cutAt = await scalar(c, compileTimeAt({ spec, files, from: w.from, to: w.to, offset: limit - before }));
  if (cutAt === null) throw new DatasetUnavailableError(spec.descriptor.name, 'files changed while they were read');
  const inside = Number((await scalar(c, compileCount(spec, files, w.from, cutAt))) ?? 0n);
  if (before + inside === 0) return { returned: limit, to: cutAt + 1n, limit, next: null, ...(q.keyed ? { lastKey: await keyAt(c, spec, files, w, limit - 1) } : {}) };
  return { returned: before + inside, to: cutAt, limit: null, next: { from: cutAt, to: w.to } };
}

export interface FileGroup {
  files: string[];
  /** Every partition in the group is one file whose rows are stored in order: no sort needed. */
  presorted: boolean;
}

export interface Grouping {
  partitions: readonly Partition[];
  /** Rows of each partition in the window. */
  counts: readonly number[];
  /** Where the response ends: partitions from there on are left out. */
  cutTo: Instant | null;
  groupRows: number;
  /** Files checked to hold their rows in ascending order key. */
  sortedFiles: ReadonlySet<string>;
}

/**
 * Consecutive partitions with rows, grouped to about `groupRows` rows each: one ordered query per
 * group (small sorts are cheaper than one global sort, and presorted groups need none). The first
 * group is one partition alone, so the first byte leaves early.
 */
export function groupFiles(g: Grouping): FileGroup[] {
  const { partitions: parts, counts, cutTo, groupRows, sortedFiles } = g;
  const groups: FileGroup[] = [];
  let rows = Infinity;
  parts.forEach((p, i) => {
    if (counts[i]! === 0 || (cutTo !== null && p.start >= cutTo)) return;
    if (groups.length === 1 || rows >= groupRows) {
      groups.push({ files: [], presorted: true });
      rows = 0;
    }
    const group = groups.at(-1)!;
    group.files.push(...p.files.map((f) => f.path));
    group.presorted &&= p.files.length === 1 && sortedFiles.has(p.files[0]!.path);
    rows += counts[i]!;
  });
  return groups;
}

/**
 * The version of what this response holds: the files of the partitions up to the cut (a cut
 * response does not depend on later partitions, so a late file there does not change it).
 */
export function pageVersion(sources: Sources, cut: Pick<Cut, 'to'>): string {
  const used = sources.partitions.filter((p) => cut.to === null || p.start <= cut.to);
  const hashes = used.flatMap((p) => p.files.map((f) => sources.footerHashes.get(f.path) ?? ''));
  return fingerprint([...hashes, ...sources.stationHashes, ...modelHashes(sources.correction)]);
}
