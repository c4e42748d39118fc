import http from 'node:http';

export interface AbortedRequest {
  status: number;
  /** Request start to response headers, and to the first body byte (NaN when none came). */
  headersMs: number;
  firstByteMs: number;
  /** Body bytes received before the bench closed the socket (or the response ended). */
  bytes: number;
  /**
   * 'aborted': the bench closed the socket mid-body; 'ended': the body was complete before the
   * abort point; 'broken': the server cut the transfer itself.
   */
  outcome: 'aborted' | 'ended' | 'broken';
}

const TIMEOUT_MS = 120_000;

/**
 * GET `url` and close the socket once `abortAfterBytes` body bytes arrived: the client that gives
 * up mid-download. The socket is destroyed, not drained, so the server sees the connection go
 * while it is still writing.
 */
export function fetchAndAbort(url: string, headers: Record<string, string>, abortAfterBytes: number): Promise<AbortedRequest> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let aborted = false;
    const request = http.get(url, { headers, agent: false }, (response) => {
      const headersMs = performance.now() - started;
      let firstByteMs = Number.NaN;
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        if (bytes === 0) firstByteMs = performance.now() - started;
        bytes += chunk.length;
        if (!aborted && bytes >= abortAfterBytes) {
          aborted = true;
          request.destroy();
        }
      });
      response.on('error', () => {});
      response.on('close', () => {
        const outcome = aborted ? 'aborted' : response.complete ? 'ended' : 'broken';
        resolve({ status: response.statusCode ?? 0, headersMs, firstByteMs, bytes, outcome });
      });
    });
    // Destroying our own request mid-body is the point, not a failure; anything else is.
    request.on('error', (e) => aborted || reject(e));
    request.setTimeout(TIMEOUT_MS, () => request.destroy(new Error(`no bytes from the server for ${TIMEOUT_MS / 1000} s`)));
  });
}
