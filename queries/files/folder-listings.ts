import { stat } from 'node:fs/promises';

/**
 * A folder changed this recently may change again within its time stamp's granularity without its
 * modification time moving: such a listing is used once and not kept.
 */
const SETTLED_MS = 2_000;
const MAX_KEPT = 20_000;

/**
 * What was found in a folder (its partition folders, its data file names), kept until the folder's
 * modification time changes: adding, removing or renaming an entry changes it, so a request pays
 * one `stat` instead of a listing of every partition. Files' own sizes and times are not kept here:
 * they are read on every listing (a file rewritten in place does not touch its folder).
 */
export class FolderListings {
  private readonly kept = new Map<string, { mtimeNs: bigint; value: unknown }>();

  /** `list()`'s value for `dir`; `what` names the kind of value, several may be kept per folder. */
  async of<T>(dir: string, what: string, list: () => Promise<T>): Promise<T> {
    const key = `${what}\0${dir}`;
    const before = await stat(dir, { bigint: true }).catch(() => null);
    const hit = before ? this.kept.get(key) : undefined;
    if (hit && hit.mtimeNs === before!.mtimeNs) return hit.value as T;
    const value = await list();
    if (before && Date.now() - Number(before.mtimeNs / 1_000_000n) > SETTLED_MS) {
      if (this.kept.size >= MAX_KEPT) this.kept.clear();
      this.kept.set(key, { mtimeNs: before.mtimeNs, value });
    } else this.kept.delete(key);
    return value;
  }
}
