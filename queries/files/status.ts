import { stat, statSync, type BigIntStats, type Stats } from 'node:fs';
import { statfs } from 'node:fs/promises';
import path from 'node:path';

/** Inline reads one turn of the event loop may spend, in µs, before the rest of that turn's go to the thread pool. */
const TURN_BUDGET_US = 2_000;
/** An inline read slower than this (µs) says the file system is slow (a network mount, a cold disk): reads go to the thread pool. */
const SLOW_US = 200;
/** While the file system looks slow, one read in this many is made inline again, to see whether it still is. */
const PROBE_EVERY = 256;

/**
 * The status of paths, as `fs/promises`'s `stat` gives it, read inline while that is cheap. A
 * year's window reads the status of every partition folder and file (several hundred, twice) on
 * each request. Through the thread pool a read costs the event loop more than the read itself: on
 * a local disk, 730 paths cost 4.0 ms of CPU with the promise form and 2.5 ms with the callback
 * form, against 0.8 ms read inline. So reads are made inline, but never more than TURN_BUDGET_US in
 * one turn of the event loop (a ten-year window's thousands of paths do not hold other requests up),
 * and not at all while the last inline read was slower than SLOW_US: the callback form then, which
 * waits without blocking (on a network mount a read is a round trip). Under a folder on a network
 * file system (readStatusesFor), never inline.
 */
export class StatusReader {
  /** Folders on a network file system (with a trailing separator): every read under one goes to the thread pool. */
  private readonly remote: string[] = [];
  private spentUs = 0;
  private turnEnds = false;
  private slowFor = 0;
  /** Reads made inline and through the thread pool. */
  readonly reads = { inline: 0, pooled: 0 };

  constructor(
    private readonly turnBudgetUs = TURN_BUDGET_US,
    private readonly slowUs = SLOW_US,
  ) {}

  /** Whether reads go to the thread pool because the last inline read was slow. */
  get slow(): boolean {
    return this.slowFor > 0;
  }

  /**
   * Every read under `folder` through the thread pool from now on: it is on a network file system,
   * where one read that hangs (a server gone) would otherwise hold the whole process, not one request.
   */
  poolUnder(folder: string): void {
    const root = path.resolve(folder) + path.sep;
    if (!this.remote.includes(root)) this.remote.push(root);
  }

  /** The status of `file` (ENOENT and the like reject, as `stat` does). */
  of(file: string): Promise<Stats> {
    return this.read(file, () => statSync(file), () => new Promise((resolve, reject) => stat(file, (e, s) => (e ? reject(e) : resolve(s)))));
  }

  /** The status of `file` with times in nanoseconds. */
  nsOf(file: string): Promise<BigIntStats> {
    return this.read(file, () => statSync(file, { bigint: true }), () => new Promise((resolve, reject) => stat(file, { bigint: true }, (e, s) => (e ? reject(e) : resolve(s)))));
  }

  private read<T>(file: string, inline: () => T, pooled: () => Promise<T>): Promise<T> {
    if (this.remote.length > 0 && this.remote.some((r) => file.startsWith(r) || file === r.slice(0, -1))) {
      this.reads.pooled++;
      return pooled();
    }
    if (this.slowFor > 0 || this.spentUs >= this.turnBudgetUs) {
      this.slowFor = Math.max(0, this.slowFor - 1);
      this.reads.pooled++;
      return pooled();
    }
    this.reads.inline++;
    if (!this.turnEnds) {
      this.turnEnds = true;
      setImmediate(() => {
        this.spentUs = 0;
        this.turnEnds = false;
      });
    }
    const start = performance.now();
    try {
      return Promise.resolve(inline());
    } catch (e) {
      return Promise.reject(e);
    } finally {
      const us = (performance.now() - start) * 1000;
      this.spentUs += us;
      if (us > this.slowUs) this.slowFor = PROBE_EVERY - 1;
    }
  }
}

/**
 * Network and user-space file systems by their statfs magic number: a status read there is a round
 * trip to a server or a daemon, and may never come back.
 */
const REMOTE_FILE_SYSTEMS = new Map<number, string>([
  [0x6969, 'NFS'],
  [0x517b, 'SMB'],
  [0xff534d42, 'CIFS'],
  [0xfe534d42, 'SMB2'],
  [0x564c, 'NCP'],
  [0x65735546, 'FUSE'],
  [0x00c36400, 'Ceph'],
  [0x01021997, '9P'],
  [0x5346414f, 'AFS'],
  [0x6b414653, 'AFS'],
  [0x73757245, 'Coda'],
  [0x01161970, 'GFS2'],
  [0x7461636f, 'OCFS2'],
  [0x47504653, 'GPFS'],
  [0x0bd00bd0, 'Lustre'],
  [0xaad7aaea, 'PanFS'],
]);

/** The name of a network or user-space file system by its statfs type, or null (a local one). */
export const remoteFileSystem = (type: number): string | null => REMOTE_FILE_SYSTEMS.get(type >>> 0) ?? null;

const reader = new StatusReader();

/** How long the start waits for statfs(DATA_DIR): a local file system answers at once. */
const STATFS_WAIT_MS = 5_000;
/** What a file system that gave no answer in time is called. */
export const NO_ANSWER = 'no answer to statfs';

/**
 * Looks at the file system `folder` is on (DATA_DIR): on a network or user-space one, every status
 * under it is read through the thread pool. Its name, or null for a local one (read inline while
 * cheap). One that gives no answer within `waitMs` (a mount whose server has gone) is taken for a
 * network one, NO_ANSWER: the start goes on instead of hanging on it.
 */
export async function readStatusesFor(folder: string, statuses: StatusReader = reader, look: (f: string) => Promise<{ type: number }> = statfs, waitMs = STATFS_WAIT_MS): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), waitMs)));
  const found = await Promise.race([look(folder), late]).finally(() => clearTimeout(timer));
  const remote = found ? remoteFileSystem(found.type) : NO_ANSWER;
  if (remote) statuses.poolUnder(folder);
  return remote;
}

/** The status of `path`, read as StatusReader does (ENOENT and the like reject, as `stat` does). */
export const statusOf = (path: string): Promise<Stats> => reader.of(path);

/** The status of `path` with times in nanoseconds, read as StatusReader does. */
export const statusNsOf = (path: string): Promise<BigIntStats> => reader.nsOf(path);
