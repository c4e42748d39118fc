import { PiecePool } from '../engine/piece-pool.ts';
import { PIECE_BYTES, readWhole, renderedPieces, type RenderedRead } from '../renderings/renderings.ts';
import type { Sources } from '../sources/preflight.ts';
import { wholeWindowBody } from '../formats.ts';
import { readOnce, type Extract, type ExtractRequest } from '../sources/context.ts';
import type { ExtractContext } from '../renderings/rendered.ts';
import { answerRead, type ReadWindow } from './in-memory.ts';
import { pageVersion } from './plan.ts';
import { presorted, readRendered } from '../renderings/rendered.ts';
import { verifyWritten, wholeWindow } from './whole-window.ts';

/**
 * A window answered from its files' renderings before any DuckDB connection is asked for (its
 * checks need none), or null: not renderable, or a file not rendered (yet, or any more). A file
 * changed just before it was listed has its footer read again after the rows are found, before the
 * first byte; the others are the versions their renderings hold (see assertFilesUnchanged). A
 * window of more than `ctx.inMemoryMaxBytes` is read and sent a piece at a time, its renderings kept
 * until it is sent. `mayWait` false: never waits for a rendering (the request holds a connection).
 */
export async function answerRendered(ctx: ExtractContext, req: ExtractRequest, sources: Sources, cacheKey: string | null, mayWait = true): Promise<Extract | null> {
  const body = ctx.renderings ? wholeWindowBody(req.format, req.descriptor) : null;
  const files = sources.partitions.flatMap((p) => p.files.map((f) => f.path));
  if (!body || files.length === 0) return null;
  const w = { ctx, req, sources, body, group: { files, presorted: presorted(sources) }, cacheKey };
  const read = await readRendered(w, ctx.inMemoryMaxBytes, mayWait);
  if (!read) return null;
  if (read.bytes - read.skip > ctx.inMemoryMaxBytes) return sendRendered(w, read);
  const whole = await readWhole(read);
  return whole && answerRead(w, whole.bytes, whole.returned, 'rendered');
}

/** The window sent from its renderings a piece at a time: its length known before the first byte, so a cut shows. */
async function sendRendered(w: ReadWindow, read: RenderedRead): Promise<Extract> {
  try {
    await verifyWritten(w, read.returned, true);
  } catch (e) {
    read.release();
    throw e;
  }
  const pool = new PiecePool(PIECE_BYTES);
  const { chunks } = readOnce(() => renderedPieces(read, PIECE_BYTES, pool), read.release);
  const written = { returned: read.returned, dataVersion: pageVersion(w.sources, { to: w.req.window?.to ?? null }), bytes: read.bytes - read.skip };
  return { ...wholeWindow('rendered', w.sources, written, chunks, read.release), sendsTo: (done) => pool.sendsTo(done) };
}
