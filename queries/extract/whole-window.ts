import { readFile, rm, stat } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { PiecePool } from '../engine/piece-pool.ts';
import type { CachedRows } from '../engine/rows-cache.ts';
import type { Reservation, TempBudget } from '../engine/temp-budget.ts';
import { DatasetUnavailableError } from '../errors.ts';
import type { Sources } from '../sources/preflight.ts';
import { FORMATS, wholeWindowBody, type TextBody } from '../formats.ts';
import { compileRows } from '../sql/compile.ts';
import { compileCopy } from '../sql/compile-copy.ts';
import type { Window } from '../window.ts';
import { copyInto, streamWrittenFiles, tempFileBase } from '../encode/copy-stream.ts';
import { readOnce, type Extract, type ExtractWay, type ExtractRequest, type PreparedExtract } from '../sources/context.ts';
import type { ExtractContext } from '../renderings/rendered.ts';
import { verifierOf } from '../sources/listed-files.ts';
import { presorted, renderLater } from '../renderings/rendered.ts';
import { pageVersion, type FileGroup } from './plan.ts';
import { sideBySide, withIdleHelpers } from '../engine/request-connection.ts';
import { rowSlices, sliceCount } from '../sources/slices.ts';

export interface WholeWindowPlan {
  group: FileGroup;
  /** The format's text body: how COPY writes the rows, and the separator dropped before the first. */
  body: TextBody;
}

export interface WholeWindowCopy extends PreparedExtract<ExtractContext>, WholeWindowPlan {
  /** The key of this response's rows in the rows cache; null: not cached. */
  cacheKey: string | null;
}

interface Slices {
  /** The request's own connection, then the idle ones borrowed for it. */
  connections: readonly DuckDBConnection[];
  windows: (Window | null)[];
  files: string[];
}

type Written = Pick<Extract, 'returned' | 'dataVersion'>;

/**
 * A window whose files hold no more rows than one group, and no more than ROW_LIMIT, needs neither
 * a count nor a cut: null when that is not so, or when its format's rows are not written by COPY.
 */
export function wholeWindowPlan(ctx: ExtractContext, req: ExtractRequest, sources: Sources): WholeWindowPlan | null {
  const body = wholeWindowBody(req.format, req.descriptor);
  if (!body || sources.fileRows === null || sources.fileRows > Math.min(ctx.rowLimit, ctx.groupRows)) return null;
  const files = sources.partitions.flatMap((p) => p.files.map((f) => f.path));
  if (files.length === 0) return null;
  return { body, group: { files, presorted: presorted(sources) } };
}

/**
 * The whole window written before the response starts: COPY's own row counts are what the response
 * promises, a failure is still a status code, and the connections are free before the first byte.
 * A window with enough rows is cut into consecutive time slices written side by side on idle
 * connections, so a one-day extract uses the cores a one-year extract does.
 */
export async function copyWholeWindow(w: WholeWindowCopy): Promise<Extract> {
  const most = sliceCount(w.req.window, w.sources, w.ctx.connectionsPerExtract);
  const { files, returned } = await withIdleHelpers(w.ctx.engine, w.connection, most, w.ctx.signal, async (connections) => {
    const slices = takeSlices(w, connections);
    return { files: slices.files, returned: await writeSlices(w, slices) };
  });
  w.release();
  renderLater(w);
  const written = { returned, dataVersion: pageVersion(w.sources, { to: w.req.window?.to ?? null }) };
  return (await admitToCache(w, files, written)) ?? (await sendWritten(w, files, written));
}

/** The request's connection and the idle ones the window is worth, one time slice (and file) each. */
function takeSlices(w: WholeWindowCopy, connections: readonly DuckDBConnection[]): Slices {
  // Every row lies inside its partition (checked), so slicing only where window and partitions
  // overlap loses nothing and keeps a wide window over a little data from leaving slices empty.
  const windows = w.req.window ? rowSlices(w.req.window, w.sources, connections.length) : [null];
  const base = tempFileBase(w.ctx.tempDir);
  return { connections, windows, files: windows.map((_, i) => `${base}-${i}.csv`) };
}

/** The slices written and checked: the rows written. Their files are removed when anything fails. */
async function writeSlices(w: WholeWindowCopy, slices: Slices): Promise<number> {
  try {
    const returned = await copySlices(w, slices);
    await verifyWritten(w, returned);
    return returned;
  } catch (e) {
    await removeAll(slices.files);
    throw e;
  }
}

/** Each slice copied on its own connection, side by side: the rows written, or the first failure. */
async function copySlices(w: WholeWindowCopy, { connections, windows, files }: Slices): Promise<number> {
  const select = FORMATS[w.req.format].rows;
  const order = w.group.presorted ? 'stored' : 'sort';
  // The first slice to fail says why; the others then fail with the interrupt it sent them.
  const copied = await sideBySide(connections, windows.length, (c, i) => {
    const rows = compileRows({ spec: w.spec, files: w.group.files, select, from: windows[i]?.from ?? null, to: windows[i]?.to ?? null, order });
    return copyInto(c, compileCopy(rows, w.body.copy, files[i]!, w.ctx.tempDir));
  });
  return copied.reduce((n, rows) => n + rows, 0);
}

/** `fromRenderings`: the rows are the files' renderings', not read from the files (see assertFilesUnchanged). */
export async function verifyWritten(w: Pick<WholeWindowCopy, 'ctx' | 'req' | 'sources' | 'group'>, returned: number, fromRenderings = false): Promise<void> {
  // An interrupt that reached a statement while it was still being prepared is lost: look again.
  w.ctx.signal.throwIfAborted();
  // The file checks counted the files' rows (at most ROW_LIMIT, or this path is not taken): more
  // means a file changed without its size or modification time changing.
  if (returned > (w.sources.fileRows ?? 0)) throw new DatasetUnavailableError(w.req.descriptor.name, 'files changed while they were read');
  await verifierOf(w.req.descriptor.name, w.sources, fromRenderings)(w.group.files);
}

/** Rows the cache admits and that are small enough: kept there (their files removed) and answered from memory; else null. */
async function admitToCache(w: WholeWindowCopy, files: readonly string[], written: Written): Promise<Extract | null> {
  const cache = w.ctx.rowsCache;
  if (!w.cacheKey || !cache?.admit(w.cacheKey)) return null;
  const kept = await keepSmall(files, w.body.separator.length, cache.maxEntryBytes);
  if (!kept) return null;
  const rows = { bytes: kept, ...written };
  cache.set(w.cacheKey, rows);
  return fromMemory(w.sources, rows, 'copy');
}

/** Bytes of a written file read at a time, into buffers used again once the response has written them (engine/piece-pool.ts). */
const WRITTEN_PIECE_BYTES = 256 * 1024;

/** The written files sent in order and removed, their bytes held in the temp budget until then. */
export async function sendWritten(w: Pick<WholeWindowCopy, 'ctx' | 'body' | 'sources'>, files: readonly string[], written: Written): Promise<Extract> {
  const { reservation, bytes } = await reserveWritten(w.ctx.tempBudget, files);
  const pool = new PiecePool(WRITTEN_PIECE_BYTES);
  const { chunks, dispose } = readOnce(() => streamWrittenFiles(files, w.body.separator.length, w.ctx.signal, pool), () => reservation.release(), () => {
    reservation.release();
    for (const f of files) void rm(f, { force: true });
  });
  // The separator before the first row is not sent (every row carries one when there are rows).
  return { ...wholeWindow('copy', w.sources, { ...written, bytes: bytes > 0 ? bytes - w.body.separator.length : 0 }, chunks, dispose), sendsTo: (progress) => pool.sendsTo(progress) };
}

const removeAll = (files: readonly string[]) => Promise.all(files.map((f) => rm(f, { force: true })));

/** The written files' bytes, reserved until they are sent; a full budget removes them and refuses (503). */
async function reserveWritten(budget: TempBudget, files: readonly string[]): Promise<{ reservation: Reservation; bytes: number }> {
  const sizes = await Promise.all(files.map(async (f) => (await stat(f)).size));
  const bytes = sizes.reduce((a, b) => a + b, 0);
  try {
    return { reservation: budget.reserve(bytes), bytes };
  } catch (e) {
    await removeAll(files);
    throw e;
  }
}

/** The written files as one buffer (files removed), or null when they hold more than `maxBytes`. */
async function keepSmall(files: readonly string[], skip: number, maxBytes: number): Promise<Buffer | null> {
  const sizes = await Promise.all(files.map(async (f) => (await stat(f)).size));
  if (sizes.reduce((a, b) => a + b, 0) > maxBytes) return null;
  const bytes = Buffer.concat(await Promise.all(files.map((f) => readFile(f))));
  await removeAll(files);
  return bytes.subarray(Math.min(skip, bytes.length));
}

/** A whole window's response: nothing cut, nothing to continue. */
export function wholeWindow(way: ExtractWay, sources: Sources, written: Written & Pick<Extract, 'bytes'>, chunks: Extract['chunks'], dispose: Extract['dispose']): Extract {
  return { way, observation: sources.observation, folderValue: sources.folderValue, correction: sources.correction, ...written, truncated: false, next: null, chunks, dispose };
}

/** A response whose rows are already in memory (from the cache, or just read): no connection, nothing to clean up. */
export function fromMemory(sources: Sources, rows: CachedRows, way: ExtractWay): Extract {
  const chunks = async function* () {
    if (rows.bytes.length > 0) yield rows.bytes;
  };
  return wholeWindow(way, sources, { returned: rows.returned, dataVersion: rows.dataVersion, bytes: rows.bytes.length }, chunks, () => undefined);
}
