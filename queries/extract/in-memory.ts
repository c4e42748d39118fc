import { rm, writeFile } from 'node:fs/promises';
import duckdb from '@duckdb/node-bindings';
import { DuckDBTypeId, type DuckDBMaterializedResult } from '@duckdb/node-api';
import { Utf8 } from 'apache-arrow';
import { runStaged } from './staged-run.ts';
import { fileIdentity } from '../files/data-file.ts';
import type { Sources } from '../sources/preflight.ts';
import { FORMATS } from '../formats.ts';
import type { RowsQuery } from '../sql/compile.ts';
import { compileStaged } from '../sql/compile-staged.ts';
import { FEATURE_COPY } from '../sql/compile-copy.ts';
import { sinkFor } from '../encode/arrow-columns.ts';
import { tempFileBase } from '../encode/copy-stream.ts';
import type { Extract, ExtractWay } from '../sources/context.ts';
import type { ExtractContext } from '../renderings/rendered.ts';
import { pageVersion } from './plan.ts';
import { renderLater } from '../renderings/rendered.ts';
import { fromMemory, sendWritten, verifyWritten, type WholeWindowCopy, type WholeWindowPlan } from './whole-window.ts';

/**
 * A whole window of GeoJSON Features (one text column a row, written by DuckDB) whose files hold at
 * most `ctx.inMemoryRows` rows is answered from memory, staged through a table (runStaged): no
 * temp file, and the count is the result's. Other windows are copied to temp files first.
 */
export function inMemory(ctx: ExtractContext, sources: Sources, whole: WholeWindowPlan): boolean {
  // A whole-window plan with the Feature copy exists only where DuckDB writes the Features (no WKB).
  return whole.body.copy === FEATURE_COPY && sources.fileRows !== null && sources.fileRows <= ctx.inMemoryRows;
}

/**
 * What the statement depends on besides its text: the station files written into its join, as
 * listed (a replaced file is another statement). The window's own files are a bound value.
 */
const stationsIdentity = (sources: Sources) => (sources.stationFiles ?? []).map(fileIdentity).join('\0');

/**
 * The window's rows exactly as the temp-file copy writes them (FEATURE_COPY: a comma before every
 * Feature but the first, a newline after each), read as bytes from DuckDB's vectors.
 */
export function featureBytes(result: DuckDBMaterializedResult): Buffer {
  if (result.columnCount !== 1 || result.columnTypeId(0) !== DuckDBTypeId.VARCHAR) throw new Error('the Feature select must give one VARCHAR column');
  const parts: Uint8Array[] = [];
  let total = 0;
  for (let i = 0; i < result.chunkCount; i++) {
    const chunk = result.getChunk(i);
    const rows = chunk.rowCount;
    const sink = sinkFor(new Utf8(), rows);
    sink.put(duckdb.data_chunk_get_vector(chunk.chunk, 0), rows, 0, rows, 0);
    const data = sink.take(rows);
    const offsets = data.valueOffsets;
    const text = data.values as Uint8Array;
    const out = Buffer.allocUnsafe(offsets[rows]! + 2 * rows);
    let at = 0;
    for (let r = 0; r < rows; r++) {
      if (total + at > 0) out[at++] = 0x2c; // ','
      out.set(text.subarray(offsets[r]!, offsets[r + 1]!), at);
      at += offsets[r + 1]! - offsets[r]!;
      out[at++] = 0x0a; // '\n'
    }
    parts.push(out.subarray(0, at));
    total += at;
  }
  return Buffer.concat(parts, total);
}

/** The Features written to a temp file (after the separator the copied files begin with) and sent from it. */
async function spill(w: Pick<WholeWindowCopy, 'ctx' | 'body' | 'sources'>, bytes: Buffer, written: { returned: number; dataVersion: string }): Promise<Extract> {
  const file = `${tempFileBase(w.ctx.tempDir)}-0.csv`;
  try {
    await writeFile(file, [Buffer.from(w.body.separator), bytes]);
  } catch (e) {
    await rm(file, { force: true });
    throw e;
  }
  return sendWritten(w, [file], written);
}

/** The window's Features staged through a table (runStaged), as bytes. */
async function readStaged(w: WholeWindowCopy): Promise<{ bytes: Buffer; returned: number }> {
  const query: RowsQuery = {
    spec: w.spec,
    files: w.group.files,
    select: FORMATS[w.req.format].rows,
    from: w.req.window?.from ?? null,
    to: w.req.window?.to ?? null,
    order: w.group.presorted ? 'stored' : 'sort',
    bindFiles: true,
  };
  // Never null here: a whole window has no row limit, and inMemory admits no WKB geometry.
  const staged = compileStaged(query);
  if (!staged) throw new Error('a window read into memory is staged through a table');
  const result = await runStaged(w.connection, staged, stationsIdentity(w.sources), w.ctx.signal);
  return { bytes: featureBytes(result), returned: result.rowCount };
}

/** What answering bytes read into memory needs of a window: no connection. */
export type ReadWindow = Pick<WholeWindowCopy, 'ctx' | 'req' | 'sources' | 'group' | 'body' | 'cacheKey'>;

/**
 * Bytes read into memory, checked like a copied window: answered from memory and kept in the rows
 * cache when asked again, or, past `ctx.inMemoryMaxBytes` (IN_MEMORY_MAX_MB), written to a temp file
 * and sent from there, under the temp budget, like a copied window (a slow client's socket holds all
 * the bytes sent from memory, as for the rows cache's entries).
 */
export async function answerRead(w: ReadWindow, bytes: Buffer, returned: number, way: ExtractWay = 'memory'): Promise<Extract> {
  await verifyWritten(w, returned, way === 'rendered');
  const page = { returned, dataVersion: pageVersion(w.sources, { to: w.req.window?.to ?? null }) };
  if (bytes.length > w.ctx.inMemoryMaxBytes) return spill(w, bytes, page);
  const written = { bytes, ...page };
  const cache = w.ctx.rowsCache;
  if (w.cacheKey && cache?.admit(w.cacheKey) && bytes.length <= cache.maxEntryBytes) cache.set(w.cacheKey, written);
  return fromMemory(w.sources, written, way);
}

/** The window's Features staged through a table, then its files rendered in the background (RENDER_CACHE_MB). */
export async function answerInMemory(w: WholeWindowCopy): Promise<Extract> {
  const { bytes, returned } = await readStaged(w);
  if (bytes.length > w.ctx.inMemoryMaxBytes) {
    // Written to its temp file before the connection is given back: windows are then never read into
    // memory faster than they are written out. Under load the writes wait for I/O threads the running
    // statements hold, and bodies of 15 MB piled up (eleven at once, clients hanging up in bursts).
    const spilled = await answerRead(w, bytes, returned);
    w.release();
    renderLater(w);
    return spilled;
  }
  w.release();
  renderLater(w);
  return answerRead(w, bytes, returned);
}
