import { mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../../shared/atomic-file.ts';

const Timestamp = z.string().datetime({ offset: true });

export const KeyRecord = z.object({
  id: z.string().regex(/^[a-z0-9]{8}$/),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  name: z.string(),
  institution: z.string(),
  purpose: z.string(),
  email: z.string(),
  issuedAtUtc: Timestamp,
  expiresAtUtc: Timestamp,
  revokedAtUtc: Timestamp.nullable(),
});
export type KeyRecord = z.infer<typeof KeyRecord>;

export const RegistryFile = z.object({ keys: z.array(KeyRecord) });
export type RegistryFile = z.infer<typeof RegistryFile>;

/** Reads the registry; a missing file is an empty registry, a malformed one is an error. */
export async function readRegistry(file: string): Promise<RegistryFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { keys: [] };
    throw e;
  }
  return RegistryFile.parse(JSON.parse(text));
}

const LOCK_STALE_MS = 30_000;
const LOCK_WAIT_MS = 15_000;

/** An exclusive lock file: concurrent CLI runs serialise their read-modify-write. */
async function lock(file: string): Promise<() => Promise<void>> {
  const lockFile = `${file}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await open(lockFile, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(lockFile, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const age = await stat(lockFile).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (age > LOCK_STALE_MS) await rm(lockFile, { force: true });
      else if (Date.now() > deadline) throw new Error(`key registry is locked by another process (${lockFile})`);
      else await new Promise((r) => setTimeout(r, 10 + Math.random() * 40));
    }
  }
}

/** Owner-only: the registry holds no secret, but who holds a key is nobody else's business. */
const writeAtomically = (file: string, data: RegistryFile): Promise<void> => writeFileAtomic(file, JSON.stringify(data, null, 2) + '\n', 0o600);

/** Read, change and write the registry under the lock; returns what `change` returned. */
export async function updateRegistry<T>(file: string, change: (r: RegistryFile) => T): Promise<T> {
  await mkdir(path.dirname(file), { recursive: true });
  const unlock = await lock(file);
  try {
    const registry = await readRegistry(file);
    const result = change(registry);
    await writeAtomically(file, registry);
    return result;
  } finally {
    await unlock();
  }
}
