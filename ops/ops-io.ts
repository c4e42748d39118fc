import path from 'node:path';
import { DATASETS, type DatasetDescriptor } from '../datasets/index.ts';
import { UsageError, type ClientIo } from '../shared/command-io.ts';
import { loadConfig } from '../server/config.ts';
import { DatasetBusyError } from './ops-lock.ts';

export function datasetNamed(name: string | undefined, command: string): DatasetDescriptor {
  const d = DATASETS.find((x) => x.name === name);
  if (!d) throw new UsageError(`${command} needs a dataset: ${DATASETS.map((x) => x.name).join(', ')}`);
  return d;
}

/** --data-dir, else DATA_DIR as the server reads it. */
export const dataDirFrom = (given: string | undefined, env: NodeJS.ProcessEnv): string => path.resolve(given ?? loadConfig(env).dataDir);

/** One self-overwriting status line on a terminal, at most every 200 ms; nothing elsewhere. */
export function statusLine(io: ClientIo): { draw(text: string): void; clear(): void } {
  let lastMs = 0;
  let drawn = false;
  return {
    draw(text) {
      if (!io.stderrIsTTY || Date.now() - lastMs < 200) return;
      lastMs = Date.now();
      io.stderr.write(`\r\x1b[K${text}`);
      drawn = true;
    },
    clear() {
      if (drawn) io.stderr.write('\r\x1b[K');
      drawn = false;
    },
  };
}

export const count = (n: number): string => n.toLocaleString('en-US');

/** Exit code 1 with one line when another ingest or compact holds the dataset; anything else is rethrown. */
export function busyExit(io: ClientIo, command: string, e: unknown): number {
  if (!(e instanceof DatasetBusyError)) throw e;
  io.stderr.write(`fire-api ${command}: ${e.message}\n`);
  return 1;
}
