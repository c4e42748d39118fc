import type { Instant } from '../instant.ts';

/** A data file as listed: what the footer, identity and check modules need of it. */
export interface DataFile {
  path: string;
  size: number;
  mtimeMs: number;
  /** The inode when listed: a file replaced by rename under the same name has another. */
  ino?: number;
  /** The time range of the partition the file lies in; every row must fall inside it. */
  partition?: { start: Instant; end: Instant };
}

/** A file as listed: path, size, modification time and inode (a file replaced by rename with the same size and time is another file). */
export const fileIdentity = (f: DataFile): string => `${f.path}\0${f.size}\0${f.mtimeMs}\0${f.ino ?? ''}`;
