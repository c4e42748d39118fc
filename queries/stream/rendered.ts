import { indexable } from '../engine/render-filter.ts';
import { renderable, type RenderedFormat } from '../engine/renderings.ts';
import type { WholeWindowCopy } from './whole-window.ts';

type Window = Pick<WholeWindowCopy, 'ctx' | 'req' | 'sources' | 'group'>;

/**
 * The format a window's rows may be rendered in (RENDER_CACHE_MB), or null: a text format rendered,
 * a dataset whose bytes depend on the file alone, filters a rendering's index answers, files whose rows are stored in order
 * key (the order a rendering holds them in is then the order the window is sent in), and no more
 * rows than a window read into memory (IN_MEMORY_ROWS).
 */
function renderedFormat(w: Window): RenderedFormat | null {
  const format = w.req.format;
  if (format !== 'geojson' && format !== 'csv') return null;
  const small = w.sources.fileRows !== null && w.sources.fileRows <= w.ctx.inMemoryRows;
  return w.ctx.renderings != null && renderable(w.req.descriptor) && w.group.presorted && indexable(w.req.descriptor, w.req.filters) && small ? format : null;
}

const windowFiles = (w: Window) => w.sources.partitions.flatMap((p) => p.files);

/** The window's rows from its files' renderings, or null: not rendered (yet, or any more), or not renderable. */
export async function readRendered(w: Window): Promise<{ bytes: Buffer; returned: number } | null> {
  const format = renderedFormat(w);
  if (!format) return null;
  return w.ctx.renderings!.read(format, windowFiles(w), w.sources.footerHashes, { from: w.req.window?.from ?? null, to: w.req.window?.to ?? null, filters: w.req.filters });
}

/** After a window answered the old way (its connection given back): its files rendered in the background. */
export function renderLater(w: WholeWindowCopy): void {
  const format = renderedFormat(w);
  if (format) w.ctx.renderings!.renderLater(w.ctx.engine, format, w.spec, windowFiles(w), w.sources.footerHashes);
}
