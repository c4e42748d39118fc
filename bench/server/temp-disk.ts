import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

/** The folder renderings are kept in under TEMP_DIR, in a budget of their own (RENDER_CACHE_MB). */
const RENDERINGS = 'renderings';

/** Bytes of every file under `dir` right now, those under a renderings folder apart; files removed while it walks count as gone. */
export async function directoryBytes(dir: string, inRenderings = false): Promise<{ bytes: number; renderings: number }> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const total = { bytes: 0, renderings: 0 };
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      const under = await directoryBytes(p, inRenderings || e.name === RENDERINGS);
      [total.bytes, total.renderings] = [total.bytes + under.bytes, total.renderings + under.renderings];
    } else if (e.isFile()) {
      const size = (await stat(p).catch(() => null))?.size ?? 0;
      if (inRenderings) total.renderings += size;
      else total.bytes += size;
    }
  }
  return total;
}

export interface DiskSampler {
  /** Stops sampling (idempotent): the most bytes seen under the folder, renderings apart, in MB, the most renderings seen, and how many samples. */
  stop(): { peakMb: number; renderingsPeakMb: number; samples: number };
}

/**
 * Polls the server's TEMP_DIR while a scenario runs, one walk at a time: the groups written ahead
 * for slow clients live there, and their total must stay within the server's budget. Renderings
 * (RENDER_CACHE_MB, a budget of their own) are counted apart.
 */
export function sampleDirectory(dir: string, intervalMs = 250): DiskSampler {
  let peak = 0;
  let renderings = 0;
  let samples = 0;
  let stopped = false;
  const poll = async () => {
    while (!stopped) {
      const now = await directoryBytes(dir);
      [peak, renderings] = [Math.max(peak, now.bytes), Math.max(renderings, now.renderings)];
      samples++;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  };
  void poll();
  return {
    stop: () => {
      stopped = true;
      return { peakMb: peak / 1e6, renderingsPeakMb: renderings / 1e6, samples };
    },
  };
}
