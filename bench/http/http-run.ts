import http from 'node:http';
import { arrowRowCounter, parquetRowCounter } from './columnar-count.ts';
import { rawGet } from './raw-get.ts';

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
 * the client, though not what makes some month-geojson runs slow (docs/history.md, GeoJSON Features).
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

/** What can be held back: a response, or the raw socket. */
interface Pausable {
  pause(): void;
  resume(): void;
}

/**
 * Holds the reader back to `bytesPerSecond` on average: paused, the socket is not read, so the
 * server meets a full TCP window exactly as it would behind a slow network. `stop` clears the timer.
 */
function throttle(reader: Pausable, bytesPerSecond: number, started: number): { pace(bytes: number): void; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  return {
    stop: () => clearTimeout(timer),
    pace: (bytes) => {
      const aheadMs = (bytes / bytesPerSecond) * 1000 - (performance.now() - started);
      if (aheadMs <= 0 || timer) return;
      reader.pause();
      timer = setTimeout(() => {
        timer = undefined;
        reader.resume();
      }, aheadMs);
    },
  };
}

/**
 * What a run counts as its body arrives, keeping only a few bytes of it: the columnar counters
 * keep the chunks they are given (the footer, a message), the others read each chunk only while
 * it is handed over.
 */
function bodyTally(format: WireFormat, started: number) {
  const countFeatures = makeCounter(FEATURE_HEAD);
  const columnar = format === 'parquet' ? parquetRowCounter() : format === 'arrow' ? arrowRowCounter() : null;
  let [firstByteMs, bytes, units, head, tail] = [Number.NaN, 0, 0, Buffer.alloc(0), Buffer.alloc(0)];
  return {
    get bytes() {
      return bytes;
    },
    add(chunk: Buffer): void {
      if (bytes === 0) firstByteMs = performance.now() - started;
      bytes += chunk.length;
      if (columnar) columnar.add(chunk);
      else units += format === 'csv' ? countNewlines(chunk) : countFeatures(chunk);
      if (head.length < 64) head = Buffer.concat([head, chunk.subarray(0, 64)]);
      tail = Buffer.from(Buffer.concat([tail, chunk.subarray(-8)]).subarray(-8));
    },
    /** The run as it stands; `ended`: the transfer reached its end as framed. */
    run(status: number, headersMs: number, returned: string | undefined, ended: boolean): HttpRun {
      return {
        status,
        wallMs: performance.now() - started,
        headersMs,
        firstByteMs,
        bytes,
        rows: columnar ? (columnar.rows() ?? Number.NaN) : format === 'csv' ? Math.max(0, units - 1) : units,
        returnedHeader: typeof returned === 'string' ? Number(returned) : null,
        complete: ended && endsProperly(format, head, tail, bytes),
      };
    },
  };
}

/**
 * GET `url` and count what arrives, keeping only a few bytes of the body: a one-year
 * extract is gigabytes. A broken transfer is reported (complete: false), not thrown. CSV and
 * GeoJSON at full speed are read from the socket into one buffer (raw-get.ts); the columnar
 * formats (whose counters keep chunks) and paced reads (whose pauses must come between reads of
 * node's size) through node's HTTP client.
 */
export function fetchExtract(url: string, format: WireFormat, headers: Record<string, string> = {}, options: FetchOptions = {}): Promise<HttpRun> {
  const raw = (format === 'csv' || format === 'geojson') && !options.bytesPerSecond;
  return raw ? fetchRaw(url, format, headers, options) : fetchHttp(url, format, headers, options);
}

function fetchHttp(url: string, format: WireFormat, headers: Record<string, string>, options: FetchOptions): Promise<HttpRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let responded = false;
    const accept = ACCEPT[format];
    const request = http.get(url, { headers: accept ? { ...headers, accept } : headers, agent: false, ...(options.signal ? { signal: options.signal } : {}) }, (response) => {
      responded = true;
      options.onHead?.(response.statusCode ?? 0);
      const held = options.bytesPerSecond ? throttle(response, options.bytesPerSecond, started) : null;
      const headersMs = performance.now() - started;
      const tally = bodyTally(format, started);
      let aborted = false;
      response.on('data', (chunk: Buffer) => {
        tally.add(chunk);
        held?.pace(tally.bytes);
      });
      response.on('aborted', () => (aborted = true));
      response.on('error', () => (aborted = true));
      // A paused response (held back by the pace) would not close on the abort until resumed: it
      // would go on reading at its pace to the end. Cut means cut.
      const cut = () => {
        held?.stop();
        response.destroy();
      };
      options.signal?.addEventListener('abort', cut, { once: true });
      response.on('close', () => {
        options.signal?.removeEventListener('abort', cut);
        held?.stop();
        resolve(tally.run(response.statusCode ?? 0, headersMs, response.headers['x-returned'] as string | undefined, response.complete && !aborted));
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

function fetchRaw(url: string, format: WireFormat, headers: Record<string, string>, options: FetchOptions): Promise<HttpRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    if (options.signal?.aborted) return resolve(abortedRun(started));
    const tally = bodyTally(format, started);
    let head: { status: number; headersMs: number; returned: string | undefined } | null = null;
    let failure: Error | null = null;
    const abort = () => get.destroy();
    const get = rawGet(new URL(url), headers, {
      onHead: (h) => {
        head = { status: h.status, headersMs: performance.now() - started, returned: h.headers.get('x-returned') };
        options.onHead?.(h.status);
      },
      onBody: (bytes) => {
        tally.add(bytes);
        idle.refresh();
      },
      onError: (e) => (failure ??= e),
      onClose: (ended) => {
        clearTimeout(idle);
        options.signal?.removeEventListener('abort', abort);
        // A stalled server, or no response at all, ends the bench with an error; an abort the caller made is a run.
        if (failure && !options.signal?.aborted && (!head || failure.message.startsWith('no bytes'))) return reject(failure);
        if (!head) return resolve(abortedRun(started));
        resolve(tally.run(head.status, head.headersMs, head.returned, ended));
      },
    });
    options.signal?.addEventListener('abort', abort, { once: true });
    // A stalled server must end the bench with an error, not hang it; a live extract is never silent this long.
    const idle = setTimeout(() => get.destroy(new Error(`no bytes from the server for ${IDLE_TIMEOUT_MS / 1000} s`)), IDLE_TIMEOUT_MS);
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
