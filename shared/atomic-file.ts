import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes `text` under a hidden temporary name beside `file` (names starting with `.` are never
 * read as data), syncs it and renames it into place: a reader sees the old file or the new one,
 * never half of one. `mode` applies to a newly created file (e.g. 0o600 for the key registry).
 */
export async function writeFileAtomic(file: string, text: string, mode = 0o644): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const handle = await open(tmp, 'w', mode);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}
