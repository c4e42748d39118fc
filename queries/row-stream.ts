import type { DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import type { Compiled } from './compile.ts';
import { encodeFeatureChunk } from './encode-chunk.ts';
import { StreamIncompleteError } from './errors.ts';

/**
 * Streams groups through DuckDB's stream() into JavaScript: the path for rows that need
 * JavaScript (WKB geometry). The client library ends a failed stream as if it had finished, so
 * only the count tells: a short count throws and the response is aborted.
 */
export async function* streamRows(connection: DuckDBConnection, groups: readonly Compiled[], expected: number, signal: AbortSignal): AsyncGenerator<string> {
  let written = 0;
  try {
    for (const g of groups) {
      // An interrupt between two groups is forgotten by DuckDB: stop here instead.
      signal.throwIfAborted();
      const result = await connection.stream(g.sql, g.params);
      for (let chunk: DuckDBDataChunk | null; (chunk = await result.fetchChunk()) && chunk.rowCount > 0; ) {
        const text = encodeFeatureChunk(chunk, written === 0);
        written += chunk.rowCount;
        yield text;
      }
    }
    if (written !== expected) throw new StreamIncompleteError(expected, written);
  } finally {
    if (written !== expected) connection.interrupt();
  }
}
