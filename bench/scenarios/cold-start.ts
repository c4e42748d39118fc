import { fetchAndAbort } from '../http/abort-request.ts';
import type { ServerProcess } from '../server/server-process.ts';

export interface ColdStartResult {
  path: string;
  status: number;
  /** Request start to response headers: the whole preflight with every cache empty. */
  headersMs: number;
  firstByteMs: number;
}

/**
 * cold-first-byte: the first request a fresh server process gets is the one-year window, so every
 * partition listing and file check is done for the first time. The page cache is warm (the bench
 * read every file before), so this is the server's own cold cost, not the disk's. The transfer is
 * cut after the first bytes: only the wait before them is measured here.
 */
export async function measureColdStart(server: ServerProcess, path: string): Promise<ColdStartResult> {
  const run = await fetchAndAbort(server.baseUrl + path, server.requestHeaders, 1);
  return { path, status: run.status, headersMs: run.headersMs, firstByteMs: run.firstByteMs };
}
