import { mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';

/** Another ingest or compact of the same dataset is running: two at once could write a row twice. */
export class DatasetBusyError extends Error {}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Runs `fn` holding `<dataset>/_ops.lock` (never read as data: it starts with `_`). A lock left by
 * a process that no longer exists is taken over; a live one is refused at once, not waited for.
 */
export async function withDatasetLock<T>(datasetDir: string, fn: () => Promise<T>): Promise<T> {
  await mkdir(datasetDir, { recursive: true });
  const lockFile = path.join(datasetDir, '_ops.lock');
  for (let attempt = 0; ; attempt++) {
    const handle = await open(lockFile, 'wx').catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
      return null;
    });
    if (handle) {
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      break;
    }
    const holder = Number.parseInt(await readFile(lockFile, 'utf8').catch(() => ''), 10);
    // No pid yet: its holder may be between creating the file and writing it.
    const young = await stat(lockFile).then((s) => Date.now() - s.mtimeMs < 10_000, () => false);
    const held = Number.isInteger(holder) && holder > 0 ? alive(holder) : young;
    if (attempt > 0 || held) throw new DatasetBusyError(`another ingest or compact of ${path.basename(datasetDir)} is running (${lockFile}, pid ${holder || 'unknown'})`);
    await rm(lockFile, { force: true });
  }
  try {
    return await fn();
  } finally {
    await rm(lockFile, { force: true });
  }
}
