import type { Instant } from '../instant.ts';

/** A data file as listed: what the footer, identity and check modules need of it. */
export interface DataFile {
  path: string;
  size: number;
  mtimeMs: number;
  /** The inode when listed: a file replaced by rename under the same name has another. */
  ino?: number;
  /** The status change time when listed: every write moves it, even one that keeps the size and sets the modification time back. */
  ctimeMs?: number;
  /** When the listing began (before the file's status was read). */
  listedMs?: number;
  /** The time range of the partition the file lies in; every row must fall inside it. */
  partition?: { start: Instant; end: Instant };
}

/**
 * A file as listed: path, size, modification time, inode and status change time (a file replaced by
 * rename, or rewritten in place, with the same size and time is another file).
 */
export const fileIdentity = (f: DataFile): string => `${f.path}\0${f.size}\0${f.mtimeMs}\0${f.ino ?? ''}\0${f.ctimeMs ?? ''}`;

/** Whether a file's status now is the one it was listed with (what the listing did not see is not compared). */
export const asListed = (f: DataFile, now: { size: number; mtimeMs: number; ino: number; ctimeMs: number }): boolean =>
  now.size === f.size && now.mtimeMs === f.mtimeMs && (f.ino === undefined || now.ino === f.ino) && (f.ctimeMs === undefined || now.ctimeMs === f.ctimeMs);
