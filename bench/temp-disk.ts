import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

/** Bytes of every file under `dir` right now; files removed while it walks count as gone. */
export async function directoryBytes(dir: string): Promise<number> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  let total = 0;
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += await directoryBytes(p);
    else if (e.isFile()) total += (await stat(p).catch(() => null))?.size ?? 0;
  }
  return total;
}

export interface DiskSampler {
  /** Stops sampling (idempotent): the most bytes seen under the folder, in MB, and how many samples. */
  stop(): { peakMb: number; samples: number };
}

/**
 * Polls the server's TEMP_DIR while a scenario runs, one walk at a time: the groups written ahead
 * for slow clients live there, and their total must stay within the server's budget.
 */
export function sampleDirectory(dir: string, intervalMs = 250): DiskSampler {
  let peak = 0;
  let samples = 0;
  let stopped = false;
  const poll = async () => {
    while (!stopped) {
      peak = Math.max(peak, await directoryBytes(dir));
      samples++;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  };
  void poll();
  return {
    stop: () => {
      stopped = true;
      return { peakMb: peak / 1e6, samples };
    },
  };
}
