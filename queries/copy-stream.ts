import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { StreamIncompleteError } from './errors.ts';

export interface CopyPlan {
  /** One COPY runs on each at a time; with two, the next groups are written while one is sent. */
  connections: readonly DuckDBConnection[];
  tempDir: string;
  /** The COPY statement of group `i` into `target`. */
  compile(i: number, target: string): { sql: string; params: string[] };
  groups: number;
  expected: number;
  /** Bytes to drop from the very start (the separator before the first GeoJSON Feature). */
  skipFirstBytes: number;
  /** The request's budget: once spent, the transfer stops even if DuckDB's part is done. */
  signal: AbortSignal;
  /** Called once every COPY has finished: the connections are no longer needed for the rest of the transfer. */
  onCopiesDone(): void;
}

export const tempFileBase = (tempDir: string): string => path.join(tempDir, `extract-${randomUUID()}`);

async function* readWhole(file: string, skip: number, signal: AbortSignal, knownSize?: number): AsyncGenerator<Buffer> {
  const size = knownSize ?? (await stat(file)).size;
  let read = 0;
  if (size > skip) for await (const chunk of createReadStream(file, { start: skip, highWaterMark: 1 << 18 })) {
    signal.throwIfAborted();
    read += (chunk as Buffer).length;
    yield chunk as Buffer;
  }
  if (read !== Math.max(0, size - skip)) throw new Error(`read ${read} of ${size - skip} bytes of a group file`);
}

/**
 * Files already written by COPY, sent whole in order and then removed (also when the transfer stops
 * early). `skipFirstBytes` drops the start of the first file that has any bytes.
 */
export async function* streamWrittenFiles(files: readonly string[], skipFirstBytes: number, signal: AbortSignal): AsyncGenerator<Buffer> {
  try {
    let skip = skipFirstBytes;
    for (const file of files) {
      const size = (await stat(file)).size;
      yield* readWhole(file, size > 0 ? skip : 0, signal, size);
      if (size > 0) skip = 0;
    }
  } finally {
    await Promise.all(files.map((f) => rm(f, { force: true })));
  }
}

/** COPY into `file`: the number of rows written (a failed COPY throws). */
export async function copyInto(c: DuckDBConnection, q: { sql: string; params: string[] }): Promise<number> {
  const written = (await c.runAndReadAll(q.sql, q.params)).getRows()[0]?.[0];
  if (typeof written !== 'bigint' && typeof written !== 'number') throw new Error('COPY reported no row count');
  return Number(written);
}

/**
 * Streams groups written by DuckDB's COPY into temp files, in order, while the following groups'
 * COPYs run (one per connection). Unlike stream(), a failed COPY throws, and COPY reports how many
 * rows it wrote: the sum must be the promised count, or the response is aborted.
 */
export async function* streamCopies(plan: CopyPlan): AsyncGenerator<Buffer> {
  const base = tempFileBase(plan.tempDir);
  const fileOf = (i: number) => `${base}-${i}.csv`;
  const width = plan.connections.length;
  const pending: Promise<number>[] = [];
  const start = (i: number) => {
    if (i >= plan.groups) return;
    pending[i] = copyInto(plan.connections[i % width]!, plan.compile(i, fileOf(i)));
    // Later groups may fail while an earlier file is still going out; each is awaited (and its
    // error thrown) in turn, so mark it handled now or Node treats it as unhandled.
    pending[i]!.catch(() => undefined);
  };
  for (let i = 0; i < width; i++) start(i);
  let rows = 0;
  let copiesDone = plan.groups === 0;
  if (copiesDone) plan.onCopiesDone();
  try {
    for (let done = 0; done < plan.groups; done++) {
      rows += await pending[done]!;
      start(done + width);
      if (done === plan.groups - 1) {
        copiesDone = true;
        plan.onCopiesDone();
      }
      yield* readWhole(fileOf(done), done === 0 ? plan.skipFirstBytes : 0, plan.signal);
      await rm(fileOf(done), { force: true });
    }
    if (rows !== plan.expected) throw new StreamIncompleteError(plan.expected, rows);
  } finally {
    // Once the COPYs are done the connections may already serve other requests: never interrupt them then.
    if (!copiesDone) for (const c of plan.connections) c.interrupt();
    await Promise.all(pending.map((p) => p.catch(() => undefined)));
    await Promise.all(pending.map((_, i) => rm(fileOf(i), { force: true })));
  }
}
