import { indexable } from './render-filter.ts';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { renderable, type RenderedFormat, type RenderedRead } from './renderings.ts';
import { contended } from './render-timing.ts';
import type { DataFile } from '../files/data-file.ts';
import type { Sources } from '../sources/preflight.ts';
import type { Extract, PreparedExtract, QueryContext } from '../sources/context.ts';
import type { Renderings } from './renderings.ts';

/** What an extract reads with: every request's context, and the renderings its windows may be answered from. */
export interface ExtractContext extends QueryContext {
  /** Files' GeoJSON Features rendered once, served by byte range (RENDER_CACHE_MB); null or absent: off. */
  renderings?: Renderings | null;
}

/** What a window answered from renderings, or rendered after, knows (whole-window.ts calls in here, not the other way). */
type WindowAsked = Pick<PreparedExtract<ExtractContext>, 'ctx' | 'req' | 'sources'>;

/** Each partition of the window is one file stored in order key: the order a rendering holds its rows in is the order the window is sent in. */
export const presorted = (sources: Sources): boolean => sources.partitions.every((p) => p.files.length === 1 && sources.sortedFiles.has(p.files[0]!.path));

/**
 * The format a window's rows may be rendered in (RENDER_CACHE_MB), or null: a text format rendered,
 * a dataset whose bytes depend on the file alone, filters a rendering's index answers, files whose
 * rows are stored in order key, and no more rows than ROW_LIMIT (a rendered window is never cut).
 */
function renderedFormat(w: WindowAsked): RenderedFormat | null {
  const format = RENDERED_FORMATS.find((f) => f === w.req.format);
  if (!format || !mayBeRendered(w.req.descriptor, format) || w.ctx.renderings == null || windowFiles(w).length === 0) return null;
  const whole = w.sources.fileRows !== null && w.sources.fileRows <= w.ctx.rowLimit;
  return presorted(w.sources) && indexable(w.req.descriptor, w.req.filters) && whole ? format : null;
}

/** GeoJSON first: the default format. */
const RENDERED_FORMATS: readonly RenderedFormat[] = ['geojson', 'csv'];

/** Whether a window of dataset `d` in `format` may be answered from renderings (when they are on): its format rendered, its Features the file's alone. */
export const mayBeRendered = (d: DatasetDescriptor, format: string): boolean => renderable(d) && RENDERED_FORMATS.some((f) => f === format);

const windowFiles = (w: WindowAsked) => w.sources.partitions.flatMap((p) => p.files);

/** A window read into memory when answered the old way: its files are waited for when rendered soon, and rendered as soon as it is answered. */
const small = (w: WindowAsked) => w.sources.fileRows !== null && w.sources.fileRows <= w.ctx.inMemoryRows;

/** Whether a file of `rows` rows (its footer's) is rendered: no more than a group or a page holds (its CSV lines are split in memory). */
const renderableRows = (ctx: Pick<ExtractContext, 'rowLimit' | 'groupRows'>, rows: number | null | undefined) => rows != null && rows <= Math.min(ctx.rowLimit, ctx.groupRows);

/**
 * Where the window's rows lie in its files' renderings (kept until released), or null: not rendered
 * (yet, or any more), or not renderable. One of more than `sentWhole` bytes, to be sent a piece at a
 * time, is checked on disk first. A small window waits for its file's rendering when it is soon,
 * unless `mayWait` is false.
 */
export async function readRendered(w: WindowAsked, sentWhole: number, mayWait = true): Promise<RenderedRead | null> {
  const format = renderedFormat(w);
  if (!format) return null;
  const window = { from: w.req.window?.from ?? null, to: w.req.window?.to ?? null, filters: w.req.filters };
  const read = await w.ctx.renderings!.rangesSoon(w.ctx.engine, format, windowFiles(w), w.sources.footerHashes, window, w.ctx.signal, { checkAbove: sentWhole, waits: mayWait && small(w) });
  // While others use DuckDB, queued before this window is answered the old way: the file's windows
  // asked meanwhile wait for its rendering instead. Alone, rendered after it, as it never slows it.
  if (!read && small(w) && contended(w.ctx.engine)) w.ctx.renderings!.renderLater(w.ctx.engine, format, wholeFileSpec(w.ctx, w.req.descriptor), windowFiles(w), w.sources.footerHashes);
  return read;
}

/** What a rendering reads of a file: its rows, whatever the window's filters (a rendering holds them all). */
const wholeFileSpec = (ctx: Pick<ExtractContext, 'dataDir'>, descriptor: DatasetDescriptor) => ({ descriptor, dataDir: ctx.dataDir, filters: [], params: {}, stationFiles: null });

/**
 * After a window answered the old way (its connection given back): its files rendered in the
 * background, a small window's at once, a larger one's only while no request uses DuckDB.
 */
export function renderLater(w: WindowAsked & Pick<PreparedExtract<ExtractContext>, 'spec'>): void {
  const format = renderedFormat(w);
  const files = windowFiles(w).filter((f) => renderableRows(w.ctx, w.sources.rowsByFile.get(f.path)));
  if (format && files.length > 0) w.ctx.renderings!.renderLater(w.ctx.engine, format, w.spec, files, w.sources.footerHashes, small(w) ? 'asked' : 'quiet');
}

/** A window streamed group by group: its files rendered once the response is over, however it ended. */
export function renderedAfter(w: WindowAsked & Pick<PreparedExtract<ExtractContext>, 'spec'>, x: Extract): Extract {
  let queued = false;
  return {
    ...x,
    dispose: () => {
      x.dispose();
      if (!queued) renderLater(w);
      queued = true;
    },
  };
}

/**
 * A file the background checks found good: after start-up (new data, 'seen'), rendered in the
 * formats rendered after any file asked for, and only while no request waits for DuckDB; at start
 * ('stock'), after every other file, only while no request uses DuckDB, and only into room the
 * budget has left. Only a file stored in order key of no more rows than a group.
 */
export function renderSeen(ctx: Pick<ExtractContext, 'renderings' | 'engine' | 'dataDir' | 'rowLimit' | 'groupRows'>, d: DatasetDescriptor, file: DataFile, verdict: { footerHash: string; sorted: boolean; rows: number | null }, priority: 'seen' | 'stock' = 'seen'): void {
  if (!ctx.renderings || !renderable(d) || !verdict.sorted || !renderableRows(ctx, verdict.rows)) return;
  const spec = wholeFileSpec(ctx, d);
  const hashes = new Map([[file.path, verdict.footerHash]]);
  for (const format of RENDERED_FORMATS) ctx.renderings.renderLater(ctx.engine, format, spec, [file], hashes, priority);
}
