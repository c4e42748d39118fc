import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { StreamIncompleteError } from './errors.ts';

export interface CopyPlan {
  connection: DuckDBConnection;
  tempDir: string;
  /** The COPY statement of group `i` into `target`. */
  compile(i: number, target: string): { sql: string; params: string[] };
  groups: number;
  expected: number;
  /** Bytes to drop from the very start (the separator before the first GeoJSON Feature). */
  skipFirstBytes: number;
}

async function copyGroup(plan: CopyPlan, i: number, file: string): Promise<number> {
  const q = plan.compile(i, file);
  const rows = (await plan.connection.runAndReadAll(q.sql, q.params)).getRows();
  return Number(rows[0]?.[0] ?? -1);
}

async function* readWhole(file: string, skip: number): AsyncGenerator<Buffer> {
  const size = (await stat(file)).size;
  let read = 0;
  if (size > skip) for await (const chunk of createReadStream(file, { start: skip, highWaterMark: 1 << 18 })) {
    read += (chunk as Buffer).length;
    yield chunk as Buffer;
  }
  if (read !== Math.max(0, size - skip)) throw new Error(`read ${read} of ${size - skip} bytes of a group file`);
}

/**
 * Streams groups written by DuckDB's COPY into temp files, each group's COPY running while the
 * previous group's file goes out. Unlike stream(), a failed COPY throws, and COPY reports how
 * many rows it wrote: the sum must be the promised count, or the response is aborted.
 */
export async function* streamCopies(plan: CopyPlan): AsyncGenerator<Buffer> {
  const base = path.join(plan.tempDir, `extract-${randomUUID()}`);
  const fileOf = (i: number) => `${base}-${i}.csv`;
  let started = 0;
  const start = (i: number) => {
    started = i + 1;
    const copy = copyGroup(plan, i, fileOf(i));
    // The next group's COPY may fail while the current file is still going out; it is awaited
    // (and its error thrown) only then, so mark it handled now or Node treats it as unhandled.
    copy.catch(() => undefined);
    return copy;
  };
  let pending: Promise<number> | null = plan.groups > 0 ? start(0) : null;
  let rows = 0;
  try {
    for (let i = 0; pending; i++) {
      rows += await pending;
      pending = i + 1 < plan.groups ? start(i + 1) : null;
      yield* readWhole(fileOf(i), i === 0 ? plan.skipFirstBytes : 0);
      await rm(fileOf(i), { force: true });
    }
    if (rows !== plan.expected) throw new StreamIncompleteError(plan.expected, rows);
  } finally {
    if (pending) {
      plan.connection.interrupt();
      await pending.catch(() => undefined);
    }
    await Promise.all(Array.from({ length: started }, (_, i) => rm(fileOf(i), { force: true })));
  }
}
