import path from 'node:path';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import type { FileVerdict } from './check.ts';
import type { DataFile } from './data-file.ts';

/** Where a checked file stands: servable and stored in order, servable but sorted on the fly, or failing. */
export type FileState = 'ok' | 'failing' | 'unsorted';

/** Servable files of datasets without time partitions are never read in order: they count as ok. */
export const fileState = (d: DatasetDescriptor, v: FileVerdict): FileState => (!v.ok ? 'failing' : d.time && !v.sorted ? 'unsorted' : 'ok');

export interface FailingFile {
  /** Relative to DATA_DIR. */
  path: string;
  problem: string;
}

export interface DatasetFileStates {
  counts: Record<FileState, number>;
  /** The first failing files by path. */
  failing: FailingFile[];
}

export const FAILING_LISTED = 20;

interface Entry {
  dataset: string;
  version: string;
  state: FileState;
  problem: string | null;
}

const versionOf = (f: DataFile) => `${f.size}\0${f.mtimeMs}`;

/**
 * The latest verdict on each data file the server knows of (from the start-up and background
 * checks and from requests), for /readyz and /metrics; a failing file is reported to `warn` once
 * (again only after it was fixed and broke anew).
 */
export class FileStates {
  private readonly files = new Map<string, Entry>();

  constructor(
    private readonly dataDir: string,
    private readonly warn: (failing: { dataset: string; file: string; problem: string }) => void,
  ) {}

  record(d: DatasetDescriptor, f: DataFile, verdict: FileVerdict): void {
    const rel = path.relative(this.dataDir, f.path);
    const before = this.files.get(rel);
    // Paths in a reader's message are shown relative to DATA_DIR, like the file's own.
    const problem = verdict.ok ? null : verdict.problem.replaceAll(this.dataDir + path.sep, '');
    this.files.set(rel, { dataset: d.name, version: versionOf(f), state: fileState(d, verdict), problem });
    if (problem !== null && before?.problem !== problem) this.warn({ dataset: d.name, file: rel, problem });
  }

  /** Whether this file, as listed now, has a verdict already. */
  has(f: DataFile): boolean {
    return this.files.get(path.relative(this.dataDir, f.path))?.version === versionOf(f);
  }

  /** Forgets the files of `dataset` that are no longer listed (removed, or their folder renamed). */
  retain(dataset: string, listed: readonly DataFile[]): void {
    const keep = new Set(listed.map((f) => path.relative(this.dataDir, f.path)));
    for (const [rel, e] of this.files) if (e.dataset === dataset && !keep.has(rel)) this.files.delete(rel);
  }

  summary(dataset: string): DatasetFileStates {
    const counts: Record<FileState, number> = { ok: 0, failing: 0, unsorted: 0 };
    const failing: FailingFile[] = [];
    for (const [rel, e] of this.files) {
      if (e.dataset !== dataset) continue;
      counts[e.state]++;
      if (e.problem !== null) failing.push({ path: rel, problem: e.problem });
    }
    failing.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { counts, failing: failing.slice(0, FAILING_LISTED) };
  }
}
