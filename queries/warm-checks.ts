import path from 'node:path';
import type { DatasetDescriptor } from '../datasets/index.ts';
import type { Engine } from './engine.ts';
import type { FileChecker } from './file-check.ts';
import { listFiles, listKeyValues, listPartitions, type DataFile } from './partitions.ts';

const BATCH = 64;

/** Waits for an idle connection without queueing ahead of requests; null once stopped. */
async function idleLease(engine: Engine, stopped: () => boolean) {
  for (;;) {
    if (stopped()) return null;
    const lease = engine.tryAcquire();
    if (lease) return lease;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function datasetFiles(dataDir: string, d: DatasetDescriptor): Promise<DataFile[]> {
  const dir = path.join(dataDir, d.name);
  const dirs = d.folderChoice ? (await listKeyValues(dir, d.folderChoice.key, d.name)).map((v) => path.join(dir, `${d.folderChoice!.key}=${v}`)) : [dir];
  const all: DataFile[] = [];
  for (const sub of dirs) {
    if (!d.time) all.push(...(await listFiles(sub, d.name)));
    else for (const p of await listPartitions(sub, d, { from: -(2n ** 62n), to: 2n ** 62n })) all.push(...p.files);
  }
  return all;
}

/**
 * Checks every data file once at start, in the background, so the first request over a long
 * window finds its checks cached. A connection is taken only when one is idle and given back
 * between batches: requests always come first. Problems found here are reported again (as 503)
 * when a request touches the file; here they are only logged.
 */
export async function warmFileChecks(
  engine: Engine,
  checker: FileChecker,
  dataDir: string,
  datasets: readonly DatasetDescriptor[],
  log: (problem: { dataset: string; file: string; problem: string }) => void,
  stopped: () => boolean,
): Promise<number> {
  let checked = 0;
  for (const d of datasets) {
    const files = await datasetFiles(dataDir, d).catch(() => []);
    for (let i = 0; i < files.length; i += BATCH) {
      const lease = await idleLease(engine, stopped);
      if (!lease) return checked;
      try {
        for (const f of files.slice(i, i + BATCH)) {
          const verdict = await checker.check(lease.connection, d, f);
          if (!verdict.ok) log({ dataset: d.name, file: path.relative(dataDir, f.path), problem: verdict.problem });
          checked++;
        }
      } finally {
        lease.release();
      }
    }
  }
  return checked;
}
