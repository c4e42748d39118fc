import { readFile, rm, stat } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import type { Observation } from '../files/chain.ts';
import { compileRows, type QuerySpec, type RowFilter } from '../sql/compile.ts';
import { compileCopy } from '../sql/compile-copy.ts';
import { FORMATS, wholeWindowBody, type Format, type TextBody } from '../formats.ts';
import { copyInto, streamWrittenFiles, tempFileBase } from './copy-stream.ts';
import { listedFiles, streamedExtract, verifierOf } from './extract-stream.ts';
import { assertFilesUnchanged } from '../files/identity.ts';
import type { Engine, Lease } from '../engine/engine.ts';
import { DatasetUnavailableError } from '../errors.ts';
import type { FileChecker } from '../files/check.ts';
import { countByFile, findCut, groupFiles, type Cut, type FileGroup } from './plan.ts';
import { resolveSources, type Sources } from '../files/preflight.ts';
import { resolveShapes } from '../sql/shape-filter.ts';
import { fingerprint } from '../files/footer.ts';
import type { CachedRows, RowsCache } from '../engine/rows-cache.ts';
import type { Reservation, TempBudget } from '../engine/temp-budget.ts';
import type { Window } from '../window.ts';

export interface ExtractContext {
  engine: Engine;
  checker: FileChecker;
  dataDir: string;
  /** Where DuckDB writes each group before it is sent (inside the engine's allowed directories). */
  tempDir: string;
  rowLimit: number;
  /** Rows per ordered query (partition group). */
  groupRows: number;
  /** Groups written at once: one on a connection waited for, more on idle ones while there are. */
  connectionsPerExtract: number;
  nowMs: number;
  /** Aborted on client disconnect, spent engine budget or a stalled client: interrupts whatever query of this request runs. */
  signal: AbortSignal;
  /** Rows of recent small responses by entity tag; null: off. */
  rowsCache: RowsCache | null;
  /** Disk all responses may hold in tempDir at once (TEMP_DIR_MAX_MB). */
  tempBudget: TempBudget;
  /** Bytes one streamed response may have written ahead of its client (EXTRACT_AHEAD_MB). */
  aheadBytes: number;
  /** Marks the engine working for this request (its QUERY_TIMEOUT_MS runs); returns the stop. */
  engineWork?: () => () => void;
  /** Who asked (the key id): one client's extracts never take every connection their groups may use. */
  owner?: string;
}

export interface ExtractRequest {
  descriptor: DatasetDescriptor;
  window: Window | null;
  format: Format;
  filters: readonly RowFilter[];
  folderValue: string | undefined;
  params: Readonly<Record<string, string>>;
  /**
   * Asked once the files are known and fingerprinted, before any row is counted: true means the
   * client's copy is current (If-None-Match), so no query runs and prepareExtract returns null.
   */
  isFresh?: (version: { dataVersion: string; folderValue: string | null }) => boolean;
  /** The response's entity tag for this version: the key of its rows in the rows cache. */
  cacheKey?: (version: { dataVersion: string; folderValue: string | null }) => string;
}

export interface Extract {
  observation: Observation;
  dataVersion: string;
  folderValue: string | null;
  returned: number;
  truncated: boolean;
  next: Window | null;
  /**
   * Encoded rows; verifies the promised count at the end and throws if it was not met. A columnar
   * response is the whole body, with `keyValues` in its file (Parquet) or schema (Arrow) metadata.
   */
  chunks(keyValues?: Readonly<Record<string, string>>): AsyncGenerator<string | Buffer>;
  /** Call when the response closes, however it closes: gives back what an unstarted response holds (files, temp budget). Idempotent. */
  dispose(): void;
}

/**
 * Preflight and plan: every check runs and every row is counted before the first byte is sent.
 * Null when `req.isFresh` says the client already holds this version.
 */
export async function prepareExtract(ctx: ExtractContext, req: ExtractRequest): Promise<Extract | null> {
  // The connection is taken only when something needs DuckDB: a request answered from cached
  // checks (304) or cached rows never waits for one.
  let lease: Lease | null = null;
  let leasing: Promise<Lease> | null = null;
  const connection = async (): Promise<DuckDBConnection> => {
    leasing ??= ctx.engine.acquire(ctx.signal).then((l) => (lease = l));
    return (await leasing).connection;
  };
  let done = false;
  const interrupt = () => {
    if (!done) lease?.connection.interrupt();
  };
  ctx.signal.addEventListener('abort', interrupt);
  const finish = () => {
    done = true;
    ctx.signal.removeEventListener('abort', interrupt);
    lease?.release();
  };
  try {
    const needsStations = FORMATS[req.format].stationPoints && req.descriptor.geometry.kind === 'station';
    const sources = await resolveSources(
      { dataDir: ctx.dataDir, checker: ctx.checker, connection, nowMs: ctx.nowMs, signal: ctx.signal, borrowIdle: () => idleHelpers(ctx, ctx.connectionsPerExtract - 1) },
      { descriptor: req.descriptor, window: req.window, folderValue: req.folderValue, needsStations },
    );
    if (req.isFresh?.(sources)) {
      finish();
      return null;
    }
    const cacheKey = ctx.rowsCache && req.cacheKey && wholeWindowBody(req.format, req.descriptor) ? req.cacheKey(sources) : null;
    const cached = cacheKey ? ctx.rowsCache!.get(cacheKey) : undefined;
    if (cached) {
      finish();
      return fromMemory(sources, cached);
    }
    const parts = sources.partitions;
    ctx.signal.throwIfAborted();
    const c = await connection();
    const listed: QuerySpec = {
      descriptor: req.descriptor,
      dataDir: ctx.dataDir,
      filters: req.filters,
      params: req.params,
      stationFiles: sources.stationFiles?.map((f) => f.path) ?? null,
    };
    const spec = await resolveShapes(c, listed, parts.flatMap((p) => p.files.map((f) => f.path)), req.window);
    ctx.signal.throwIfAborted();
    const body = wholeWindowBody(req.format, req.descriptor);
    const whole = body && singleCopyGroup(ctx, sources);
    if (body && whole) return await copyWholeWindow(ctx, req, spec, sources, whole, body, c, finish, cacheKey);
    const byFile = await countByFile(c, spec, parts, req.window);
    const counts = parts.map((p) => p.files.reduce((n, f) => n + (byFile.get(f.path) ?? 0), 0));
    ctx.signal.throwIfAborted();
    const cut = await findCut(c, spec, parts, counts, req.window, ctx.rowLimit);
    const groups = groupFiles(parts, counts, cut.to, ctx.groupRows, sources.sortedFiles);
    ctx.signal.throwIfAborted();
    // A file that changed since it was listed is still a status code here, not a cut transfer.
    await assertFilesUnchanged(req.descriptor.name, listedFiles(sources));
    const reservation = ctx.tempBudget.reserve(ctx.aheadBytes);
    // Groups lease their own connections while they are written: none is held for the client.
    finish();
    const plan = { spec, sources, groups, cut, reservation };
    return streamedExtract(ctx, req, plan, {
      observation: sources.observation,
      dataVersion: pageVersion(sources, cut),
      folderValue: sources.folderValue,
      returned: cut.returned,
      truncated: cut.returned < counts.reduce((a, b) => a + b, 0),
      next: cut.next,
    });
  } catch (e) {
    finish();
    throw e;
  }
}

/**
 * A window whose files hold no more rows than one group, and no more than ROW_LIMIT, needs neither
 * a count nor a cut: null when that is not so.
 */
function singleCopyGroup(ctx: ExtractContext, sources: Sources): FileGroup | null {
  if (sources.fileRows === null || sources.fileRows > Math.min(ctx.rowLimit, ctx.groupRows)) return null;
  const files = sources.partitions.flatMap((p) => p.files.map((f) => f.path));
  if (files.length === 0) return null;
  return { files, presorted: sources.partitions.every((p) => p.files.length === 1 && sources.sortedFiles.has(p.files[0]!.path)) };
}

/** Below this many rows (estimated from the files' row counts) a window is not worth a second statement. */
const SPLIT_MIN_ROWS = 10_000;

/** Rows of the listed files that fall in the window, assuming they spread evenly over their partitions. */
function estimatedRows(sources: Sources, w: Window): number {
  const parts = sources.partitions;
  if (sources.fileRows === null || parts.length === 0) return 0;
  const span = parts.at(-1)!.end - parts[0]!.start;
  const covered = overlap(w, sources);
  return span <= 0n ? 0 : (sources.fileRows * Number(covered.to - covered.from)) / Number(span);
}

/** The part of the window the listed partitions cover (the window itself when none is listed). */
function overlap(w: Window, sources: Sources): Window {
  const parts = sources.partitions;
  if (parts.length === 0) return w;
  const from = parts[0]!.start > w.from ? parts[0]!.start : w.from;
  const to = parts.at(-1)!.end < w.to ? parts.at(-1)!.end : w.to;
  return from < to ? { from, to } : w;
}

/** [from, to) cut into `n` consecutive slices of equal duration. */
function timeSlices(w: Window, n: number): Window[] {
  const step = (w.to - w.from) / BigInt(n);
  return Array.from({ length: n }, (_, i) => ({ from: w.from + step * BigInt(i), to: i === n - 1 ? w.to : w.from + step * BigInt(i + 1) }));
}

/**
 * The whole window written before the response starts: COPY's own row counts are what the response
 * promises, a failure is still a status code, and the connections are free before the first byte.
 * A window with enough rows is cut into consecutive time slices written side by side on idle
 * connections, so a one-day extract uses the cores a one-year extract does.
 */
async function copyWholeWindow(
  ctx: ExtractContext,
  req: ExtractRequest,
  spec: QuerySpec,
  sources: Sources,
  group: FileGroup,
  body: TextBody,
  c: DuckDBConnection,
  finish: () => void,
  cacheKey: string | null,
): Promise<Extract> {
  const w = req.window;
  const wanted = w && w.to - w.from > 1n && estimatedRows(sources, w) >= SPLIT_MIN_ROWS ? ctx.connectionsPerExtract - 1 : 0;
  const helpers = idleHelpers(ctx, wanted);
  const connections = [c, ...helpers.map((h) => h.connection)];
  // Every row lies inside its partition (checked), so slicing only where window and partitions
  // overlap loses nothing and keeps a wide window over a little data from leaving slices empty.
  const slices = w ? timeSlices(overlap(w, sources), connections.length) : [null];
  const base = tempFileBase(ctx.tempDir);
  const files = slices.map((_, i) => `${base}-${i}.csv`);
  const order = group.presorted ? 'stored' : 'sort';
  // The request's own connection is interrupted by prepareExtract on abort; the helpers here.
  const interruptHelpers = () => helpers.forEach((h) => h.connection.interrupt());
  ctx.signal.addEventListener('abort', interruptHelpers);
  let returned = 0;
  // The first slice to fail says why; the others then fail with the interrupt it sent them.
  let cause: { error: unknown } | null = null;
  try {
    const copies = slices.map((slice, i) =>
      copyInto(connections[i]!, compileCopy(compileRows({ spec, files: group.files, select: FORMATS[req.format].rows, from: slice?.from ?? null, to: slice?.to ?? null, order }), body.copy, files[i]!, ctx.tempDir)).catch((e: unknown) => {
        cause ??= { error: e };
        // One slice failed: the others are wasted work (their connections are still ours here).
        connections.forEach((other, j) => j !== i && other.interrupt());
        throw e;
      }),
    );
    for (const settled of await Promise.allSettled(copies)) {
      if (settled.status === 'rejected') throw (cause as { error: unknown } | null)?.error ?? settled.reason;
      returned += settled.value;
    }
    // An interrupt that reached a statement while it was still being prepared is lost: look again.
    ctx.signal.throwIfAborted();
    // The file checks counted the files' rows (at most ROW_LIMIT, or this path is not taken): more
    // means a file changed without its size or modification time changing.
    if (returned > (sources.fileRows ?? 0)) throw new DatasetUnavailableError(req.descriptor.name, 'files changed while they were read');
    await verifierOf(req.descriptor.name, sources)(group.files);
  } catch (e) {
    await Promise.all(files.map((f) => rm(f, { force: true })));
    throw e;
  } finally {
    ctx.signal.removeEventListener('abort', interruptHelpers);
    for (const h of helpers) h.release();
  }
  finish();
  const dataVersion = pageVersion(sources, { returned, to: w?.to ?? null, limit: null, next: null });
  const skip = body.separator.length;
  if (cacheKey && ctx.rowsCache?.admit(cacheKey)) {
    const kept = await keepSmall(files, skip, ctx.rowsCache.maxEntryBytes);
    if (kept) {
      const rows = { bytes: kept, returned, dataVersion };
      ctx.rowsCache.set(cacheKey, rows);
      return fromMemory(sources, rows);
    }
  }
  const reservation = await reserveWritten(ctx.tempBudget, files);
  let consumed = false;
  const chunks = async function* () {
    if (consumed) throw new Error('extract already consumed');
    consumed = true;
    try {
      yield* streamWrittenFiles(files, skip, ctx.signal);
    } finally {
      reservation.release();
    }
  };
  const dispose = () => {
    if (consumed) return;
    reservation.release();
    for (const f of files) void rm(f, { force: true });
  };
  return wholeWindow(sources, { returned, dataVersion }, chunks, dispose);
}

/** The written files' bytes, reserved until they are sent; a full budget removes them and refuses (503). */
async function reserveWritten(budget: TempBudget, files: readonly string[]): Promise<Reservation> {
  const sizes = await Promise.all(files.map(async (f) => (await stat(f)).size));
  try {
    return budget.reserve(sizes.reduce((a, b) => a + b, 0));
  } catch (e) {
    await Promise.all(files.map((f) => rm(f, { force: true })));
    throw e;
  }
}

/** The written files as one buffer (files removed), or null when they hold more than `maxBytes`. */
async function keepSmall(files: readonly string[], skip: number, maxBytes: number): Promise<Buffer | null> {
  const sizes = await Promise.all(files.map(async (f) => (await stat(f)).size));
  if (sizes.reduce((a, b) => a + b, 0) > maxBytes) return null;
  const bytes = Buffer.concat(await Promise.all(files.map((f) => readFile(f))));
  await Promise.all(files.map((f) => rm(f, { force: true })));
  return bytes.subarray(Math.min(skip, bytes.length));
}

/** A whole window's response: nothing cut, nothing to continue. */
function wholeWindow(sources: Sources, rows: { returned: number; dataVersion: string }, chunks: Extract['chunks'], dispose: Extract['dispose']): Extract {
  return { observation: sources.observation, folderValue: sources.folderValue, ...rows, truncated: false, next: null, chunks, dispose };
}

/** A response whose rows are already in memory: no connection, nothing to clean up. */
function fromMemory(sources: Sources, rows: CachedRows): Extract {
  const chunks = async function* () {
    if (rows.bytes.length > 0) yield rows.bytes;
  };
  return wholeWindow(sources, { returned: rows.returned, dataVersion: rows.dataVersion }, chunks, () => undefined);
}

export function idleHelpers(ctx: ExtractContext, wanted: number): Lease[] {
  const helpers: Lease[] = [];
  while (helpers.length < wanted) {
    const helper = ctx.engine.tryAcquire();
    if (!helper) break;
    helpers.push(helper);
  }
  return helpers;
}

/**
 * The version of what this response holds: the files of the partitions up to the cut (a cut
 * response does not depend on later partitions, so a late file there does not change it).
 */
export function pageVersion(sources: Sources, cut: Cut): string {
  const used = sources.partitions.filter((p) => cut.to === null || p.start <= cut.to);
  const hashes = used.flatMap((p) => p.files.map((f) => sources.footerHashes.get(f.path) ?? ''));
  return fingerprint([...hashes, ...sources.stationHashes]);
}
