import http from 'node:http';
import { arrowRowCounter, parquetRowCounter } from './columnar-count.ts';

export type WireFormat = 'csv' | 'geojson' | 'parquet' | 'arrow';

/** The Accept header that asks for each columnar format (CSV and GeoJSON go by the format parameter). */
export const ACCEPT: Partial<Record<WireFormat, string>> = { parquet: 'application/vnd.apache.parquet', arrow: 'application/vnd.apache.arrow.stream' };

const IDLE_TIMEOUT_MS = 120_000;

export interface HttpRun {
  status: number;
  /** Request start to the last body byte. */
  wallMs: number;
  /** Request start to the response headers: the server's whole preflight (file checks, exact count). */
  headersMs: number;
  /** Request start to the first body byte. */
  firstByteMs: number;
  bytes: number;
  /** CSV: lines minus the header. GeoJSON: Feature objects. Parquet: the footer's row count. Arrow: the record batches' lengths. */
  rows: number;
  /** The X-Returned header: what the server promised before streaming. */
  returnedHeader: number | null;
  /** The transfer reached its end (chunked terminator seen) and the body has the format's closing bytes. */
  complete: boolean;
}

/** The opening of every Feature the server writes (queries/sql/compile.ts); no property value of a fire record holds it. */
const FEATURE_HEAD = Buffer.from('{"type":"Feature",');

/** Counts occurrences of `needle` across chunk boundaries without keeping the body. */
const occurrences = (hay: Buffer, needle: Buffer) => {
  let n = 0;
  for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + needle.length)) n++;
  return n;
};

/**
 * Counts `needle` in a stream of chunks without copying them: the matches inside each chunk, and
 * those across its seam with the last bytes before it (carried, shorter than the needle, so no
 * match lies wholly in them and none wholly in the chunk's first bytes joined to them: nothing is
 * counted twice). Every chunk used to be copied to join it to the carried bytes: needless work for
 * the client, though not what makes some month-geojson runs slow (docs/performance.md).
 */
export function makeCounter(needle: Buffer): (chunk: Buffer) => number {
  const keep = needle.length - 1;
  let carry = Buffer.alloc(0);
  return (chunk) => {
    const seam = carry.length > 0 ? occurrences(Buffer.concat([carry, chunk.subarray(0, keep)]), needle) : 0;
    const n = seam + occurrences(chunk, needle);
    carry = chunk.length >= keep ? Buffer.from(chunk.subarray(chunk.length - keep)) : Buffer.from(Buffer.concat([carry, chunk]).subarray(-keep));
    return n;
  };
}

function countNewlines(chunk: Buffer): number {
  let n = 0;
  for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) n++;
  return n;
}

function endsProperly(format: WireFormat, head: Buffer, tail: Buffer, bytes: number): boolean {
  if (bytes === 0) return false;
  if (format === 'csv') return tail.at(-1) === 10;
  if (format === 'parquet') return head.subarray(0, 4).toString('latin1') === 'PAR1' && tail.subarray(-4).toString('latin1') === 'PAR1';
  if (format === 'arrow') return tail.equals(Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]));
  return head.toString('utf8').startsWith('{"type":"FeatureCollection"') && tail.toString('utf8').endsWith(']}\n');
}

export interface FetchOptions {
  /** Read no faster than this (a researcher on an ordinary network); unset: as fast as the server sends. */
  bytesPerSecond?: number;
  /** Aborting cuts the transfer: the run is reported as it stands (complete: false). */
  signal?: AbortSignal;
  /** Called with the status when the response head arrives. */
  onHead?: (status: number) => void;
}

/**
 * Holds `response` back to `bytesPerSecond` on average: paused, the socket is not read, so the
 * server meets a full TCP window exactly as it would behind a slow network.
 */
function throttle(response: http.IncomingMessage, bytesPerSecond: number, started: number): (bytes: number) => void {
  let timer: NodeJS.Timeout | undefined;
  response.once('close', () => clearTimeout(timer));
  return (bytes) => {
    const aheadMs = (bytes / bytesPerSecond) * 1000 - (performance.now() - started);
    if (aheadMs <= 0 || timer) return;
    response.pause();
    timer = setTimeout(() => {
      timer = undefined;
      response.resume();
    }, aheadMs);
  };
}

/**
 * GET `url` and count what arrives, keeping only a few bytes of the body: a one-year
 * extract is gigabytes. A broken transfer is reported (complete: false), not thrown.
 */
export function fetchExtract(url: string, format: WireFormat, headers: Record<string, string> = {}, options: FetchOptions = {}): Promise<HttpRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let responded = false;
    const accept = ACCEPT[format];
    const request = http.get(url, { headers: accept ? { ...headers, accept } : headers, agent: false, ...(options.signal ? { signal: options.signal } : {}) }, (response) => {
      responded = true;
      options.onHead?.(response.statusCode ?? 0);
      const pace = options.bytesPerSecond ? throttle(response, options.bytesPerSecond, started) : null;
      const headersMs = performance.now() - started;
      const returned = response.headers['x-returned'];
      const countFeatures = makeCounter(FEATURE_HEAD);
      const columnar = format === 'parquet' ? parquetRowCounter() : format === 'arrow' ? arrowRowCounter() : null;
      let firstByteMs = Number.NaN;
      let bytes = 0;
      let units = 0;
      let head = Buffer.alloc(0);
      let tail = Buffer.alloc(0);
      let aborted = false;
      response.on('data', (chunk: Buffer) => {
        if (bytes === 0) firstByteMs = performance.now() - started;
        bytes += chunk.length;
        if (columnar) columnar.add(chunk);
        else units += format === 'csv' ? countNewlines(chunk) : countFeatures(chunk);
        if (head.length < 64) head = Buffer.concat([head, chunk.subarray(0, 64)]);
        tail = Buffer.from(Buffer.concat([tail, chunk.subarray(-8)]).subarray(-8));
        pace?.(bytes);
      });
      response.on('aborted', () => (aborted = true));
      response.on('error', () => (aborted = true));
      response.on('close', () => {
        resolve({
          status: response.statusCode ?? 0,
          wallMs: performance.now() - started,
          headersMs,
          firstByteMs,
          bytes,
          rows: columnar ? (columnar.rows() ?? Number.NaN) : format === 'csv' ? Math.max(0, units - 1) : units,
          returnedHeader: typeof returned === 'string' ? Number(returned) : null,
          complete: response.complete && !aborted && endsProperly(format, head, tail, bytes),
        });
      });
    });
    // An abort after the response began is reported by its 'close'; before it, there is no run to report.
    request.on('error', (e) => {
      if (!options.signal?.aborted) reject(e);
      else if (!responded) resolve(abortedRun(started));
    });
    // A stalled server must end the bench with an error, not hang it; a live extract is never silent this long.
    request.setTimeout(IDLE_TIMEOUT_MS, () => request.destroy(new Error(`no bytes from the server for ${IDLE_TIMEOUT_MS / 1000} s`)));
  });
}

const abortedRun = (started: number): HttpRun => ({
  status: 0,
  wallMs: performance.now() - started,
  headersMs: Number.NaN,
  firstByteMs: Number.NaN,
  bytes: 0,
  rows: 0,
  returnedHeader: null,
  complete: false,
});
