import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DATASETS, type DatasetDescriptor } from '../datasets/index.ts';
import type { Engine } from './engine.ts';
import type { FileChecker, FileVerdict } from './file-check.ts';
import { listFiles, listKeyValues, listPartitions, malformedPartitionFolders, type DataFile } from './partitions.ts';

/** What the warm-up process reports for each file it checked. */
export interface CheckedFile {
  dataset: string;
  file: DataFile;
  verdict: FileVerdict;
}

/** A partition folder the listing skips because its name is not a valid partition key. */
export interface SkippedFolder {
  dataset: string;
  folder: string;
}

async function datasetFiles(dataDir: string, d: DatasetDescriptor, skipped: (s: SkippedFolder) => void): Promise<DataFile[]> {
  const dir = path.join(dataDir, d.name);
  const dirs = d.folderChoice ? (await listKeyValues(dir, d.folderChoice.key, d.name)).map((v) => path.join(dir, `${d.folderChoice!.key}=${v}`)) : [dir];
  const all: DataFile[] = [];
  for (const sub of dirs) {
    if (!d.time) all.push(...(await listFiles(sub, d.name)));
    else for (const p of await listPartitions(sub, d, { from: -(2n ** 62n), to: 2n ** 62n })) all.push(...p.files);
    for (const folder of await malformedPartitionFolders(sub, d)) skipped({ dataset: d.name, folder: path.relative(dataDir, path.join(sub, folder)) });
  }
  return all;
}

/**
 * Checks every data file of `datasets` on one connection, reporting each verdict and each folder
 * the listing skips (a malformed partition name is otherwise silent); the number of files checked.
 */
export async function checkAllFiles(
  engine: Engine,
  checker: FileChecker,
  dataDir: string,
  datasets: readonly DatasetDescriptor[],
  report: (checked: CheckedFile) => void,
  skipped: (s: SkippedFolder) => void = () => undefined,
): Promise<number> {
  const lease = await engine.acquire();
  let checked = 0;
  try {
    for (const d of datasets) {
      for (const file of await datasetFiles(dataDir, d, skipped).catch(() => [])) {
        report({ dataset: d.name, file, verdict: await checker.check(lease.connection, d, file) });
        checked++;
      }
    }
  } finally {
    lease.release();
  }
  return checked;
}

export interface WarmChecksEvents {
  problem(p: { dataset: string; file: string; problem: string }): void;
  skipped(s: SkippedFolder): void;
  done(files: number): void;
  failed(error: Error): void;
}

const WORKER = fileURLToPath(new URL('./warm-checks-process.ts', import.meta.url));

/**
 * Checks every data file once at start, in a short-lived child process at low priority, and keeps
 * the good verdicts in `checker`: the first request over a long window finds its checks cached,
 * and the memory that reading hundreds of files leaves behind in DuckDB and the C heap goes away
 * with the child instead of staying in the server. Requests never wait for it; a file it has not
 * reached yet is checked by the request itself. Problems are logged here and answered 503 when a
 * request touches the file.
 */
export function warmChecksInChild(dataDir: string, tempDir: string, checker: FileChecker, events: WarmChecksEvents): { running(): boolean; stop(): Promise<void> } {
  const child = fork(WORKER, [dataDir, tempDir], {
    execArgv: ['--import', import.meta.resolve('tsx')],
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
  child.on('message', (m: CheckedFile | SkippedFolder | { done: number }) => {
    if ('done' in m) {
      finished = true;
      return events.done(m.done);
    }
    if ('folder' in m) return events.skipped(m);
    const d = DATASETS.find((x) => x.name === m.dataset);
    if (!d) return;
    if (m.verdict.ok) checker.remember(d, m.file, m.verdict);
    else events.problem({ dataset: d.name, file: path.relative(dataDir, m.file.path), problem: m.verdict.problem });
  });
  // 'close' comes after the last message has been handled ('exit' may come before).
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  child.once('close', (code, signal) => {
    if (!finished && !stopping) events.failed(new Error(`warm-up process ended (code ${code}, signal ${signal}) ${stderr.trim().split('\n').at(-1) ?? ''}`));
  });
  child.once('error', (e) => events.failed(e));
  return {
    running: () => child.exitCode === null && child.signalCode === null,
    stop: async () => {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
