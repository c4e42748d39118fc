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

/** A GET whose client reads the headers and then never reads again. */
export function stalledGet(url: string, headers: Record<string, string>, onResponse?: (res: http.IncomingMessage) => void): http.ClientRequest {
  const req = http.get(url, { headers }, (res) => {
    res.pause();
    onResponse?.(res);
  });
  req.on('error', () => undefined);
  return req;
}

/**
 * A GET read steadily at about `bytesPerSecond` (a researcher on an ordinary network): the socket is
 * paused whenever the client is ahead of its rate, so the server sees real backpressure.
 */
export function throttledGet(url: string, opts: { headers: Record<string, string>; bytesPerSecond: number }): Promise<RawResponse & { ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.get(url, { headers: opts.headers }, (res) => {
      let bytes = 0;
      let settled = false;
      const done = () => {
        if (settled) return;
        settled = true;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes, complete: res.complete, ms: performance.now() - started });
      };
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        const aheadMs = (bytes / opts.bytesPerSecond) * 1000 - (performance.now() - started);
        if (aheadMs > 5) {
          res.pause();
          setTimeout(() => res.resume(), aheadMs);
        }
      });
      for (const event of ['end', 'error', 'aborted', 'close']) res.on(event, done);
    });
    req.on('error', reject);
  });
}
