import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';

const PREFIX = 'extracts-';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * This process's folder for group files, `TEMP_DIR/extracts-<pid>`. Folders left by processes
 * that no longer run (killed, crashed) are removed first; live instances sharing TEMP_DIR keep theirs.
 */
export async function extractTempDir(tempDir: string): Promise<string> {
  await mkdir(tempDir, { recursive: true });
  for (const name of await readdir(tempDir)) {
    const pid = Number(name.slice(PREFIX.length));
    if (name.startsWith(PREFIX) && Number.isInteger(pid) && pid > 0 && pid !== process.pid && !alive(pid)) {
      await rm(path.join(tempDir, name), { recursive: true, force: true });
    }
  }
  // Several apps of one process (tests) may share it: never wipe our own.
  const own = path.join(tempDir, `${PREFIX}${process.pid}`);
  await mkdir(own, { recursive: true });
  return own;
}
