import { indexable } from '../engine/render-filter.ts';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { renderable, type RenderedFormat } from '../engine/renderings.ts';
import { contended } from '../engine/render-timing.ts';
import type { DataFile } from '../files/data-file.ts';
import type { ExtractContext, PreparedExtract } from './extract-types.ts';
import type { FileGroup } from './plan.ts';

/** What a whole-window answer knows of its window (whole-window.ts calls in here, not the other way). */
type Window = Pick<PreparedExtract, 'ctx' | 'req' | 'sources'> & { group: FileGroup };

/**
 * The format a window's rows may be rendered in (RENDER_CACHE_MB), or null: a text format rendered,
 * a dataset whose bytes depend on the file alone, filters a rendering's index answers, files whose rows are stored in order
 * key (the order a rendering holds them in is then the order the window is sent in), and no more
 * rows than a window read into memory (IN_MEMORY_ROWS).
 */
function renderedFormat(w: Window): RenderedFormat | null {
  const format = RENDERED_FORMATS.find((f) => f === w.req.format);
  if (!format) return null;
  const small = w.sources.fileRows !== null && w.sources.fileRows <= w.ctx.inMemoryRows;
  return w.ctx.renderings != null && renderable(w.req.descriptor) && w.group.presorted && indexable(w.req.descriptor, w.req.filters) && small ? format : null;
}

/** GeoJSON first: the default format. */
const RENDERED_FORMATS: readonly RenderedFormat[] = ['geojson', 'csv'];

const windowFiles = (w: Window) => w.sources.partitions.flatMap((p) => p.files);

/** The window's rows from its files' renderings, or null: not rendered (yet, or any more), or not renderable. */
export async function readRendered(w: Window): Promise<{ bytes: Buffer; returned: number } | null> {
  const format = renderedFormat(w);
  if (!format) return null;
  const window = { from: w.req.window?.from ?? null, to: w.req.window?.to ?? null, filters: w.req.filters };
  const read = await w.ctx.renderings!.readSoon(w.ctx.engine, format, windowFiles(w), w.sources.footerHashes, window, w.ctx.signal);
  // While others use DuckDB, queued before this window is answered the old way: the file's windows
  // asked meanwhile wait for its rendering instead. Alone, rendered after it, as it never slows it.
  if (!read && contended(w.ctx.engine)) w.ctx.renderings!.renderLater(w.ctx.engine, format, wholeFileSpec(w.ctx, w.req.descriptor), windowFiles(w), w.sources.footerHashes);
  return read;
}

/** What a rendering reads of a file: its rows, whatever the window's filters (a rendering holds them all). */
const wholeFileSpec = (ctx: Pick<ExtractContext, 'dataDir'>, descriptor: DatasetDescriptor) => ({ descriptor, dataDir: ctx.dataDir, filters: [], params: {}, stationFiles: null });

/** After a window answered the old way (its connection given back): its files rendered in the background. */
export function renderLater(w: Window & Pick<PreparedExtract, 'spec'>): void {
  const format = renderedFormat(w);
  if (format) w.ctx.renderings!.renderLater(w.ctx.engine, format, w.spec, windowFiles(w), w.sources.footerHashes);
}

/**
 * A file the background checks found good after start-up (new data): rendered in the formats
 * rendered, after any file asked for, and only while no request waits for DuckDB. Only a file
 * stored in order key whose rows a window read into memory may hold.
 */
export function renderSeen(ctx: Pick<ExtractContext, 'renderings' | 'engine' | 'dataDir' | 'inMemoryRows' | 'rowLimit' | 'groupRows'>, d: DatasetDescriptor, file: DataFile, verdict: { footerHash: string; sorted: boolean; rows: number | null }): void {
  const rows = verdict.rows ?? Infinity;
  if (!ctx.renderings || !renderable(d) || !verdict.sorted || rows > Math.min(ctx.inMemoryRows, ctx.rowLimit, ctx.groupRows)) return;
  const spec = wholeFileSpec(ctx, d);
  const hashes = new Map([[file.path, verdict.footerHash]]);
  for (const format of RENDERED_FORMATS) ctx.renderings.renderLater(ctx.engine, format, spec, [file], hashes, true);
}
