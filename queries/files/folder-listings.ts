import { statusNsOf } from './status.ts';

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
 * they are read on every listing (a file rewritten in place does not touch its folder). A small
 * file's contents (the chain's status) may be kept too, until its own status changes.
 */
export class FolderListings {
  private readonly kept = new Map<string, { stamp: string; value: unknown }>();

  /** `settledMs`: how long ago a status must have changed to be kept (tests of keeping pass 0). */
  constructor(private readonly settledMs = SETTLED_MS) {}

  /** `list()`'s value for `dir`; `what` names the kind of value, several may be kept per folder. */
  async of<T>(dir: string, what: string, list: () => Promise<T>): Promise<T> {
    const before = await statusNsOf(dir).catch(() => null);
    return this.keep(`${what}\0${dir}`, before && { stamp: String(before.mtimeNs), changedNs: before.mtimeNs }, list);
  }

  /**
   * `read()`'s value for the file `file`, read again whenever its inode, size, modification or
   * status change time differ from when it was kept; one changed within `settledMs` is not kept
   * (a rewrite in the same clock tick could leave all four as they were). Throws what its `stat`
   * throws (ENOENT for a file not there), and what `read` throws.
   */
  async ofFile<T>(file: string, what: string, read: () => Promise<T>): Promise<T> {
    const s = await statusNsOf(file);
    return this.keep(`${what}\0${file}`, { stamp: `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`, changedNs: s.ctimeNs > s.mtimeNs ? s.ctimeNs : s.mtimeNs }, read);
  }

  private async keep<T>(key: string, now: { stamp: string; changedNs: bigint } | null, make: () => Promise<T>): Promise<T> {
    const hit = now ? this.kept.get(key) : undefined;
    if (hit && hit.stamp === now!.stamp) return hit.value as T;
    const value = await make();
    if (now && Date.now() - Number(now.changedNs / 1_000_000n) >= this.settledMs) {
      if (this.kept.size >= MAX_KEPT) this.kept.clear();
      this.kept.set(key, { stamp: now.stamp, value });
    } else this.kept.delete(key);
    return value;
  }
}
