import { DATASETS } from '../../datasets/index.ts';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { lacksFacts, type FileChecker, type FileVerdict } from './check.ts';
import type { DataFile } from './data-file.ts';
import type { FileStates } from './states.ts';
import { listDatasetFiles } from './partitions.ts';
import { checkInChild, type ChildCheck, type FileToCheck } from './warm-checks.ts';

/** A file a check found good, and whether at start. */
export interface SeenFile {
  dataset: DatasetDescriptor;
  file: DataFile;
  verdict: Extract<FileVerdict, { ok: true }>;
  atStart: boolean;
}

export interface BackgroundCheckOptions {
  dataDir: string;
  /** DuckDB's spill folder for the checking process. */
  tempDir: string;
  checker: FileChecker;
  states: FileStates;
  /** Check every file at start (WARM_FILE_CHECKS); otherwise files present at start are left to requests. */
  warm: boolean;
  /** Look for new or changed files this often; 0: never after start. */
  intervalMs: number;
  events: {
    skipped(s: { dataset: string; folder: string }): void;
    /** A round of checks ended: the start-up one (`warm`) or one of new or changed files. */
    checked(r: { files: number; ms: number; warm: boolean }): void;
    failed(error: Error): void;
    /** A file found good: at start (`atStart`, by the warm checks), or new or changed after start-up (new data, likely asked for soon). */
    seen?(s: SeenFile): void;
  };
}

/** A file modified this recently may still be being written: it waits for the next round. */
const SETTLE_MS = 500;
/** New or changed files checked per round at most; the rest wait for the next. */
const MAX_PER_ROUND = 500;

const version = (f: { size: number; mtimeMs: number }) => `${f.size}\0${f.mtimeMs}`;

/**
 * Finds bad files before requests do: every file at start (when warm), then every `intervalMs`
 * lists every dataset (names and sizes only) and checks the new or changed files in a short-lived
 * child process, one round at a time. Verdicts go to `states` (which warns once per failing file)
 * and good ones to the server's checker, so requests find them cached.
 */
export class BackgroundChecks {
  /** Version of each listed file as last handed to a check (or, at start without warm-up, seen). */
  private readonly seen = new Map<string, string>();
  private readonly skippedFolders = new Set<string>();
  private child: ChildCheck | null = null;
  private warmingNow = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private round: Promise<void> = Promise.resolve();

  constructor(private readonly o: BackgroundCheckOptions) {}

  start(): void {
    this.warmingNow = this.o.warm;
    this.round = this.runRound(true);
  }

  /** True while the start-up checks of every file run. */
  warming(): boolean {
    return this.warmingNow;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.child?.stop();
    await this.round;
  }

  private async runRound(first: boolean): Promise<void> {
    try {
      const due = await this.dueFiles(first);
      if (due.length > 0 && !this.stopped && (this.o.warm || !first)) await this.checkAll(due, first);
    } catch (e) {
      this.o.events.failed(e as Error);
    } finally {
      this.warmingNow = false;
      if (!this.stopped && this.o.intervalMs > 0) {
        this.timer = setTimeout(() => (this.round = this.runRound(false)), this.o.intervalMs);
        this.timer.unref();
      }
    }
  }

  /** Files listed now that no check has seen in this version; forgets files no longer listed. */
  private async dueFiles(first: boolean): Promise<FileToCheck[]> {
    const due: FileToCheck[] = [];
    const listed = new Set<string>();
    const nowMs = Date.now();
    for (const d of DATASETS) {
      // A dataset folder missing or changing while listed: its files wait for the next round.
      const listing = await listDatasetFiles(this.o.dataDir, d).catch(() => null);
      if (!listing) continue;
      this.o.states.retain(d.name, listing.files);
      for (const folder of listing.malformedFolders) {
        if (!this.skippedFolders.has(folder)) this.o.events.skipped({ dataset: d.name, folder });
        this.skippedFolders.add(folder);
      }
      for (const file of listing.files) {
        listed.add(file.path);
        if (this.seen.get(file.path) === version(file)) continue;
        if (!first && (nowMs - file.mtimeMs < SETTLE_MS || due.length >= MAX_PER_ROUND)) continue;
        this.seen.set(file.path, version(file));
        const known = this.o.checker.cached(d, file);
        // Checked by a request, without the facts aggregates may use: checked again, with them.
        if (known && lacksFacts(d, file, known)) due.push({ dataset: d.name, file });
        else if (known) this.o.states.record(d, file, known);
        else if (!this.o.states.has(file)) due.push({ dataset: d.name, file });
      }
    }
    for (const p of this.seen.keys()) if (!listed.has(p)) this.seen.delete(p);
    return due;
  }

  private async checkAll(files: FileToCheck[], first: boolean): Promise<void> {
    const started = Date.now();
    const unchecked = new Set(files.map((f) => f.file.path));
    // At start, told once the round is over, all in listing order: whoever takes them sees them all at once.
    const atStart: SeenFile[] = [];
    this.child = checkInChild(this.o.dataDir, this.o.tempDir, files, {
      checked: ({ dataset, file, verdict }) => {
        const d = DATASETS.find((x) => x.name === dataset)!;
        unchecked.delete(file.path);
        if (verdict.ok) this.o.checker.remember(d, file, verdict);
        this.o.states.record(d, file, verdict);
        if (!verdict.ok) return;
        if (first) atStart.push({ dataset: d, file, verdict, atStart: true });
        else this.o.events.seen?.({ dataset: d, file, verdict, atStart: false });
      },
      done: (n) => this.o.events.checked({ files: n, ms: Date.now() - started, warm: first }),
      failed: (e) => this.o.events.failed(e),
    });
    await this.child.ended;
    this.child = null;
    if (!this.stopped) for (const s of atStart) this.o.events.seen?.(s);
    // Files the process did not reach (it failed or was stopped) are tried again next round.
    for (const p of unchecked) this.seen.delete(p);
  }
}
