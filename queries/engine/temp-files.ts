import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
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

/**
 * A folder of its own for one app's renderings, under this process's folder (`own`), removed when
 * the app stops. Folders there not touched since this process started are an earlier process's of
 * the same pid (a container restarted after a kill gets its pid again): renderings nobody indexes,
 * removed first. Another app of this process (tests) keeps its own.
 */
export async function renderingsDir(own: string): Promise<string> {
  const root = path.join(own, 'renderings');
  const startedMs = Date.now() - process.uptime() * 1000;
  for (const name of await readdir(root).catch(() => [])) {
    const folder = path.join(root, name);
    const s = await stat(folder).catch(() => null);
    if (s && s.mtimeMs < startedMs) await rm(folder, { recursive: true, force: true });
  }
  return path.join(root, randomBytes(6).toString('hex'));
}
