import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { PiecePool } from '../engine/piece-pool.ts';

export const tempFileBase = (tempDir: string): string => path.join(tempDir, `extract-${randomUUID()}`);

/** The bytes [skip, size) of `file`; `knownSize` may stop short of its end. */
export async function* readWhole(file: string, skip: number, signal: AbortSignal, knownSize?: number): AsyncGenerator<Buffer> {
  const size = knownSize ?? (await stat(file)).size;
  let read = 0;
  // `end` bounds the read at the size the caller knows: a file's tail it does not send stays unread.
  if (size > skip) for await (const chunk of createReadStream(file, { start: skip, end: size - 1, highWaterMark: 1 << 18 })) {
    signal.throwIfAborted();
    read += (chunk as Buffer).length;
    yield chunk as Buffer;
  }
  if (read !== Math.max(0, size - skip)) throw new Error(`read ${read} of ${size - skip} bytes of a group file`);
}

/** readWhole into `pool`'s buffers, a piece at a time: each piece is only valid until the pool lends its buffer again. */
async function* readPooled(file: string, skip: number, signal: AbortSignal, size: number, pool: PiecePool): AsyncGenerator<Buffer> {
  const handle = await open(file, 'r');
  try {
    for (let at = skip; at < size; ) {
      signal.throwIfAborted();
      const buffer = pool.take();
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, size - at), at);
      if (bytesRead === 0) throw new Error(`read ${at - skip} of ${size - skip} bytes of a group file`);
      at += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/**
 * Files already written by COPY, sent whole in order and then removed (also when the transfer stops
 * early). `skipFirstBytes` drops the start of the first file that has any bytes. With `pool`, read
 * into its buffers (see readPooled).
 */
export async function* streamWrittenFiles(files: readonly string[], skipFirstBytes: number, signal: AbortSignal, pool?: PiecePool): AsyncGenerator<Buffer> {
  try {
    let skip = skipFirstBytes;
    for (const file of files) {
      const size = (await stat(file)).size;
      const from = size > 0 ? skip : 0;
      yield* pool ? readPooled(file, from, signal, size, pool) : readWhole(file, from, signal, size);
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

