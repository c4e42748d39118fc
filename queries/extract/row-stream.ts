import { open } from 'node:fs/promises';
import type { DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import type { Compiled } from '../sql/compile.ts';
import type { ChunkEncoder } from '../encode/encode-chunk.ts';

/**
 * Writes one group through DuckDB's stream() and the format's `encode` into `target`: the path for
 * rows that need JavaScript (WKB geometry). Every chunk starts with the separator, so the first byte of the
 * response's first rows is dropped by whoever sends them. The client library ends a failed stream
 * as if it had finished, so the count returned is what was really written: the caller compares the
 * sum with the promised count and aborts the response when it falls short.
 */
export async function writeEncodedRows(connection: DuckDBConnection, group: Compiled, encode: ChunkEncoder, target: string, signal?: AbortSignal): Promise<number> {
  const file = await open(target, 'w');
  let written = 0;
  try {
    const result = await connection.stream(group.sql, group.params);
    for (let chunk: DuckDBDataChunk | null; (chunk = await result.fetchChunk()) && chunk.rowCount > 0; ) {
      // Stops at once when the response is over, whether or not DuckDB saw the interrupt.
      signal?.throwIfAborted();
      await file.write(encode(chunk, false));
      written += chunk.rowCount;
    }
    return written;
  } finally {
    await file.close();
  }
}
