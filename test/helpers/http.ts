import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: number;
  /** True only when the transfer ended cleanly (final chunk received). */
  complete: boolean;
}

/** GET with node:http so a broken transfer is observable (fetch hides it behind a generic error). */
export function rawGet(url: string, opts: { abortAfterBytes?: number; headers?: Record<string, string>; pauseMs?: number } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: opts.headers ?? {} }, (res) => {
      let bytes = 0;
      // A slow reader: the server cannot finish sending before the pause ends.
      if (opts.pauseMs) {
        res.pause();
        setTimeout(() => res.resume(), opts.pauseMs);
      }
      const done = () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes, complete: res.complete });
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (opts.abortAfterBytes !== undefined && bytes >= opts.abortAfterBytes) {
          req.destroy();
          done();
        }
      });
      res.on('end', done);
      res.on('error', done);
      res.on('aborted', done);
      res.on('close', done);
    });
    req.on('error', (e) => (opts.abortAfterBytes !== undefined ? undefined : reject(e)));
  });
}

export async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}
