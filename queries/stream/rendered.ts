import { renderable } from '../engine/renderings.ts';
import type { WholeWindowCopy } from './whole-window.ts';

type Window = Pick<WholeWindowCopy, 'ctx' | 'req' | 'sources' | 'group'>;

/**
 * Whether the window's Features may come from renderings (RENDER_CACHE_MB): a dataset whose bytes
 * depend on the file alone, no filter, and files whose rows are stored in order key (the order a
 * rendering holds them in is then the order the window is sent in).
 */
const mayRender = (w: Window): boolean => w.ctx.renderings != null && renderable(w.req.descriptor) && w.group.presorted && w.req.filters.length === 0;

const windowFiles = (w: Window) => w.sources.partitions.flatMap((p) => p.files);

/** The window's Features from its files' renderings, or null: not rendered (yet, or any more), or not renderable. */
export async function readRendered(w: Window): Promise<{ bytes: Buffer; returned: number } | null> {
  if (!mayRender(w)) return null;
  return w.ctx.renderings!.read(windowFiles(w), w.sources.footerHashes, w.req.window?.from ?? null, w.req.window?.to ?? null);
}

/** After a window answered the old way (its connection given back): its files rendered in the background. */
export function renderLater(w: WholeWindowCopy): void {
  if (mayRender(w)) w.ctx.renderings!.renderLater(w.ctx.engine, w.spec, windowFiles(w), w.sources.footerHashes);
}
