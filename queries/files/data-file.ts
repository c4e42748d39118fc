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
