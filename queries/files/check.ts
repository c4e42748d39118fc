import type { DuckDBConnection } from '@duckdb/node-api';
import { fileColumns, type ColumnType, type DatasetDescriptor } from '../../datasets/index.ts';
import { hashFooter } from './footer.ts';
import { fileIdentity, type DataFile } from './data-file.ts';
import { ident, quoteFilePath, SOURCE_FILE_COLUMN } from '../sql/sql.ts';
import { commonSql } from '../exact/exact-sum-sql.ts';

const DUCKDB_TYPE: Record<ColumnType, (t: string) => boolean> = {
  VARCHAR: (t) => t === 'VARCHAR',
  DOUBLE: (t) => t === 'DOUBLE',
  INTEGER: (t) => t === 'INTEGER',
  BIGINT: (t) => t === 'BIGINT',
  BOOLEAN: (t) => t === 'BOOLEAN',
  TIMESTAMPTZ: (t) => t === 'TIMESTAMP WITH TIME ZONE',
  GEOMETRY: (t) => t === 'GEOMETRY' || t.startsWith('GEOMETRY('),
};

/** What is wrong with a file, or null when every descriptor column is there with its type. */
export function schemaProblem(d: DatasetDescriptor, actual: ReadonlyMap<string, string>): string | null {
  if (actual.has(SOURCE_FILE_COLUMN)) return `column ${SOURCE_FILE_COLUMN} is reserved by the service`;
  for (const c of fileColumns(d)) {
    const t = actual.get(c.name);
    if (t === undefined) return `column ${c.name} missing`;
    if (!DUCKDB_TYPE[c.type](t)) return `column ${c.name} is ${t}, expected ${c.type}`;
  }
  return null;
}

/**
 * What a file's rows were found to be, so that an aggregate over it may skip a per-row test whose
 * answer is already known (exact-sum-sql.ts, aggregate-keys.ts). Plain arrays and booleans:
 * verdicts cross from the checks' child process as messages.
 * - `common`: the aggregate measures every non-null value of which is zero or in the common lane
 *   (commonSql: finite, about 2^−15 to 2^17 in magnitude);
 * - `inGrid`: no position beyond longitude 180 or latitude 90 (as the grid's own test reads them:
 *   a NaN is beyond), so every cell index is the plain scaling's.
 */
export interface FileFacts {
  common: string[];
  inGrid: boolean;
}

/**
 * `sorted`: the file's rows are stored in strictly ascending order key, so a query over it alone
 * (or over it and other such files of later partitions) needs no sort. `facts`: absent when the
 * file was not inspected row by row (no time axis or no partition): nothing is known then.
 */
export type FileVerdict = { ok: true; footerHash: string; sorted: boolean; rows: number | null; facts?: FileFacts } | { ok: false; problem: string };

/** Whether a good verdict lacks the facts a check with them would find (a request's check): the background checks look at the file again. */
export const lacksFacts = (d: DatasetDescriptor, f: DataFile, v: FileVerdict): boolean => v.ok && !v.facts && d.aggregate !== null && d.time !== null && f.partition !== undefined;

/** The facts' columns of the inspecting statement, and how to read them back (null: the dataset has no aggregate). */
function factsSql(d: DatasetDescriptor): { read: string[]; select: string[]; facts: (values: readonly unknown[]) => FileFacts } | null {
  if (!d.aggregate) return null;
  const measures = d.aggregate.measures;
  const g = d.geometry;
  const grid = g.kind === 'point' && d.aggregate.keys.some((k) => k.kind === 'grid') ? { lon: ident(g.longitude), lat: ident(g.latitude) } : null;
  return {
    read: [...measures.map(ident), ...(grid ? [grid.lon, grid.lat] : [])],
    // Null values say nothing either way: a file of nulls proves every measure.
    select: [...measures.map((m) => `coalesce(bool_and(${commonSql(ident(m))}), true)`), grid ? `coalesce(bool_or(${grid.lon} > 180 OR ${grid.lat} > 90), false)` : 'true'],
    facts: (values) => ({ common: measures.filter((_, i) => values[i] === true), inGrid: grid !== null && values[measures.length] === false }),
  };
}

const MAX_CACHED = 200_000;

const cacheKey = (d: DatasetDescriptor, f: DataFile) => `${d.name}\0${fileIdentity(f)}`;

/**
 * Good verdicts (footer hash, schema match) cached by path, size and modification time: a replaced
 * or appended file is checked again, an unchanged one costs a map lookup. Failures are not cached:
 * they may be passing (an interrupted check, no file handles), and a broken file is rare and cheap
 * to look at again.
 */
export class FileChecker {
  private readonly cache = new Map<string, FileVerdict>();

  /** `onVerdict` hears every verdict this checker finds itself (not those it is handed). */
  constructor(
    private readonly dataDir: string,
    private readonly onVerdict: (d: DatasetDescriptor, f: DataFile, verdict: FileVerdict) => void = () => undefined,
  ) {}

  /** The verdict already found for this file as listed, without reading it. */
  cached(d: DatasetDescriptor, f: DataFile): FileVerdict | undefined {
    return this.cache.get(cacheKey(d, f));
  }

  /**
   * A check cut short by `signal` (the client hung up, the time budget ran out) interrupts DuckDB
   * mid-statement: that says nothing about the file, so it throws instead of giving a verdict.
   * `facts: false` leaves the file's facts out (a request waiting for the check does not read its
   * measures: about 3 to 8 ms more for a day file of the bench year); the start-up checks, or the next background round
   * (which takes a file known without them as due: `lacksFacts`), find them, and their verdict
   * takes its place (`remember`).
   */
  async check(c: DuckDBConnection, d: DatasetDescriptor, f: DataFile, signal?: AbortSignal, how: { facts?: boolean } = {}): Promise<FileVerdict> {
    const hit = this.cache.get(cacheKey(d, f));
    if (hit) return hit;
    const verdict = await this.inspect(c, d, f, how.facts ?? true);
    if (!verdict.ok) signal?.throwIfAborted();
    this.remember(d, f, verdict);
    this.onVerdict(d, f, verdict);
    return verdict;
  }

  /** Keeps a verdict found elsewhere (the warm-up process) for the file exactly as it was listed there. */
  remember(d: DatasetDescriptor, f: DataFile, verdict: FileVerdict): void {
    if (!verdict.ok) return;
    const key = cacheKey(d, f);
    const had = this.cache.get(key);
    // A request's check that ends after the background's verdict for the same footer does not take its facts away.
    if (had?.ok && had.facts && !verdict.facts && had.footerHash === verdict.footerHash) return;
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(key, verdict);
  }

  private async inspect(c: DuckDBConnection, d: DatasetDescriptor, f: DataFile, facts: boolean): Promise<FileVerdict> {
    try {
      const footerHash = await hashFooter(f);
      const reader = await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${quoteFilePath(f.path, this.dataDir)})`);
      const actual = new Map(reader.getRows().map((r) => [String(r[0]), String(r[1])]));
      const schema = schemaProblem(d, actual);
      if (schema) return { ok: false, problem: schema };
      const rows = await this.inspectRows(c, d, f, facts);
      return rows.problem ? { ok: false, problem: rows.problem } : { ok: true, footerHash, sorted: rows.sorted, rows: rows.count, ...(rows.facts ? { facts: rows.facts } : {}) };
    } catch (e) {
      return { ok: false, problem: `unreadable: ${(e as Error).message.split('\n')[0]}` };
    }
  }

  /**
   * Pruning, cuts and continuation all rest on every row lying inside its partition: a file that
   * breaks this is unavailable (503), never silently half-read. The same pass finds whether the
   * rows are stored in order (`lag() OVER ()` follows the file's own row order, and any key that is
   * null, repeated or smaller than the one before means "sort"), and the file's facts (FileFacts:
   * the aggregate measures and position are read for them).
   */
  private async inspectRows(c: DuckDBConnection, d: DatasetDescriptor, f: DataFile, withFacts: boolean): Promise<{ problem: string | null; sorted: boolean; count: number | null; facts?: FileFacts }> {
    if (!d.time || !f.partition) return { problem: null, sorted: false, count: null };
    const keys = d.orderBy.map(ident);
    const previous = keys.map((_, i) => `p${i}`);
    // (previous keys) < (these keys) in order-key order, written out: faster than comparing ROW values.
    const less = (i: number): string => (i === keys.length - 1 ? `${previous[i]} < ${keys[i]}` : `(${previous[i]} < ${keys[i]} OR (${previous[i]} = ${keys[i]} AND ${less(i + 1)}))`);
    // With every key non-null, a null lag marks the first row.
    const disorder = `${keys.map((k) => `${k} IS NULL`).join(' OR ')} OR (${previous[0]} IS NOT NULL AND NOT ${less(0)})`;
    const lags = keys.map((k, i) => `lag(${k}) OVER () AS ${previous[i]}`).join(', ');
    const known = withFacts ? factsSql(d) : null;
    const read = [...new Set([...keys, ...(known?.read ?? [])])];
    const rows = `SELECT ${ident(d.time.column)} AS t, ${[...read, lags].join(', ')} FROM read_parquet(${quoteFilePath(f.path, this.dataDir)})`;
    const sql = `SELECT ${['epoch_us(min(t))::BIGINT', 'epoch_us(max(t))::BIGINT', `count(*) FILTER (WHERE ${disorder})::BIGINT`, 'count(*)::BIGINT', ...(known?.select ?? [])].join(', ')} FROM (${rows})`;
    const [min, max, unordered, all, ...found] = (await c.runAndReadAll(sql)).getRows()[0] ?? [];
    const sorted = unordered === 0n;
    const count = typeof all === 'bigint' ? Number(all) : null;
    const facts = known?.facts(found);
    if (typeof min !== 'bigint' || typeof max !== 'bigint') return { problem: null, sorted, count, facts };
    const outside = min < f.partition.start || max >= f.partition.end;
    return { problem: outside ? `rows outside the partition's time range` : null, sorted, count, facts };
  }
}
