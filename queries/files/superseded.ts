// Compaction beside a live server: a partition's files cannot be swapped for one file by renames
// alone, so the compacted file names (in its footer) the files it replaces, and every listing
// leaves those out from the moment it appears, before the compactor deletes them.

import { stat } from 'node:fs/promises';
import path from 'node:path';
import { footerKeyValues } from './footer-kv.ts';
import { hashFooter, readFooter } from './footer.ts';

/** Name of a file written by `fire-api compact`: only such files are read for what they replace. */
export const COMPACTED_FILE = /^compacted-[0-9a-f]{16}\.parquet$/;

/** Footer key-value entry of a compacted file: JSON `[{name, footerSha256}]` of the files it replaces. */
export const SUPERSEDES_KEY = 'fire_api.supersedes';

export interface SupersededFile {
  name: string;
  footerSha256: string;
}

async function fileAt(file: string): Promise<{ path: string; size: number; mtimeMs: number } | null> {
  const s = await stat(file).catch(() => null);
  return s ? { path: file, size: s.size, mtimeMs: s.mtimeMs } : null;
}

/** What a compacted file says it replaces; nothing when it says nothing readable (the file check judges the file itself). */
export async function supersededBy(file: string): Promise<SupersededFile[]> {
  try {
    const found = await fileAt(file);
    const text = found ? footerKeyValues(await readFooter(found)).get(SUPERSEDES_KEY) : undefined;
    const list: unknown = text ? JSON.parse(text) : [];
    return Array.isArray(list) ? list.filter((e): e is SupersededFile => typeof e?.name === 'string' && typeof e?.footerSha256 === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * Names among `names` (the data files of one folder) that a compacted file beside them replaces:
 * same name and same footer, so a different file dropped later under an old name is still read.
 * One file alone replaces nothing, so a compacted partition costs no read at all.
 */
export async function supersededNames(dir: string, names: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  if (names.length < 2) return out;
  const present = new Set(names);
  for (const compacted of names.filter((n) => COMPACTED_FILE.test(n))) {
    for (const entry of await supersededBy(path.join(dir, compacted))) {
      if (entry.name === compacted || !present.has(entry.name) || out.has(entry.name)) continue;
      const file = await fileAt(path.join(dir, entry.name));
      // Gone already: the compactor deleted it after this folder was read.
      const same = file === null || (await hashFooter(file).catch(() => null)) === entry.footerSha256;
      if (same) out.add(entry.name);
    }
  }
  return out;
}
