import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DATASETS } from '../../datasets/index.ts';
import type { Engine } from '../engine/engine.ts';
import type { FileChecker, FileVerdict } from './check.ts';
import type { DataFile } from './data-file.ts';

export interface FileToCheck {
  dataset: string;
  file: DataFile;
}

/** What the checking process reports for each file it checked. */
export interface CheckedFile extends FileToCheck {
  verdict: FileVerdict;
}

/** Checks `files` in order on one connection, reporting each verdict; the number checked. */
export async function checkFiles(engine: Engine, checker: FileChecker, files: readonly FileToCheck[], report: (checked: CheckedFile) => void): Promise<number> {
  const lease = await engine.acquire();
  let checked = 0;
  try {
    for (const { dataset, file } of files) {
      const d = DATASETS.find((x) => x.name === dataset);
      if (!d) continue;
      report({ dataset, file, verdict: await checker.check(lease.connection, d, file) });
      checked++;
    }
  } finally {
    lease.release();
  }
  return checked;
}

export interface ChildCheckEvents {
  checked(c: CheckedFile): void;
  done(files: number): void;
  failed(error: Error): void;
}

export interface ChildCheck {
  running(): boolean;
  /** Settles once the process has ended, its last verdict handled. */
  ended: Promise<void>;
  stop(): Promise<void>;
}

// The worker runs as this module does: compiled beside compiled JavaScript (COMPILED_DIR), through tsx beside the sources.
const SELF = fileURLToPath(import.meta.url);
const COMPILED = path.extname(SELF) === '.js';
const WORKER = path.join(path.dirname(SELF), `warm-checks-process${path.extname(SELF)}`);

/**
 * Checks `files` in a short-lived child process at low priority: the memory that reading many
 * files leaves behind in DuckDB and the C heap goes away with the child instead of staying in the
 * server, and the server's connections stay free for requests. Used for every file at start and
 * for new or changed files while the server runs.
 */
export function checkInChild(dataDir: string, tempDir: string, files: readonly FileToCheck[], events: ChildCheckEvents): ChildCheck {
  const child = fork(WORKER, [dataDir, tempDir], {
    execArgv: COMPILED ? [] : ['--import', import.meta.resolve('tsx')],
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    // Nothing of the server's environment (keys' paths, NODE_OPTIONS such as --inspect) is needed.
    env: {},
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  try {
    if (child.pid !== undefined) os.setPriority(child.pid, 10);
  } catch {
    // Not allowed here: it still runs, at normal priority.
  }
  let finished = false;
  let stopping = false;
  child.on('message', (m: CheckedFile | { done: number } | { ready: true }) => {
    if ('ready' in m) return void child.send({ files });
    if ('done' in m) {
      finished = true;
      return events.done(m.done);
    }
    events.checked(m);
  });
  // 'close' comes after the last message has been handled ('exit' may come before).
  const ended = new Promise<void>((resolve) => child.once('close', () => resolve()));
  child.once('close', (code, signal) => {
    if (!finished && !stopping) events.failed(new Error(`file check process ended (code ${code}, signal ${signal}) ${stderr.trim().split('\n').at(-1) ?? ''}`));
  });
  child.once('error', (e) => events.failed(e));
  return {
    running: () => child.exitCode === null && child.signalCode === null,
    ended,
    stop: async () => {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await ended;
    },
  };
}
