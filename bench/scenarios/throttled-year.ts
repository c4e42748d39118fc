import { fetchExtract } from '../http/http-run.ts';
import type { ServerProcess } from '../server/server-process.ts';

export interface ThrottledYearAsk {
  path: string;
  expectedRows: number;
  /** The server's QUERY_TIMEOUT_MS. */
  queryTimeoutMs: number;
  bytesPerSecond: number;
}

export interface ThrottledYearResult {
  queryTimeoutMs: number;
  bytesPerSecond: number;
  status: number;
  wallSeconds: number;
  /** Wall time ÷ QUERY_TIMEOUT_MS: above 1, the download outlived the engine's time budget. */
  timeoutMultiple: number;
  bytes: number;
  rows: number;
  returnedHeader: number | null;
  expectedRows: number;
  complete: boolean;
  rowsMatch: boolean;
}

/**
 * Issue #11 (c): one client reads the one-year CSV steadily, paced so that the download lasts
 * well past the server's QUERY_TIMEOUT_MS. It must end cleanly with every row.
 */
export async function runThrottledYear(server: ServerProcess, ask: ThrottledYearAsk): Promise<ThrottledYearResult> {
  const run = await fetchExtract(server.baseUrl + ask.path, 'csv', server.requestHeaders, { bytesPerSecond: ask.bytesPerSecond });
  server.assertAlive();
  return {
    queryTimeoutMs: ask.queryTimeoutMs,
    bytesPerSecond: ask.bytesPerSecond,
    status: run.status,
    wallSeconds: run.wallMs / 1000,
    timeoutMultiple: run.wallMs / ask.queryTimeoutMs,
    bytes: run.bytes,
    rows: run.rows,
    returnedHeader: run.returnedHeader,
    expectedRows: ask.expectedRows,
    complete: run.status === 200 && run.complete,
    rowsMatch: run.rows === ask.expectedRows && run.returnedHeader === ask.expectedRows,
  };
}
