import { pipeline } from 'node:stream/promises';
import { Readable, type Transform } from 'node:stream';
import { constants, createBrotliCompress, createGzip } from 'node:zlib';
import { weightedList } from './weighted-list.ts';

/** A content coding the server writes; `identity` is the body as it is. */
export type Encoding = 'br' | 'gzip' | 'identity';

/** What the server writes, in its order of preference on a tie (brotli at quality 1 is both faster and smaller than gzip at level 1 on our CSV and GeoJSON). */
const CODINGS: readonly Exclude<Encoding, 'identity'>[] = ['br', 'gzip'];

/** The codings named, `x-gzip` read as gzip (RFC 9110 §8.4.1.3). */
const entries = (header: string) =>
  weightedList(header)
    .filter((e) => e.value !== '')
    .map((e) => ({ coding: e.value === 'x-gzip' ? 'gzip' : e.value, q: e.q }));

/**
 * RFC 9110 §12.5.3: the coding with the highest q among those named (`*` standing for every one
 * not named), br before gzip on a tie, and before identity unless identity is named with a higher
 * q. No header, an empty one, or nothing acceptable: identity — also when identity itself is
 * refused, since the body as it is always exists.
 */
export function negotiateEncoding(header: string | undefined): Encoding {
  if (!header) return 'identity';
  const listed = entries(header);
  const star = listed.find((e) => e.coding === '*')?.q ?? 0;
  let best: { coding: Encoding; q: number } = { coding: 'identity', q: 0 };
  for (const coding of CODINGS) {
    const q = listed.find((e) => e.coding === coding)?.q ?? star;
    if (q > best.q) best = { coding, q };
  }
  // Unlisted, identity comes last: `gzip;q=0.5` alone asks for gzip.
  const identityQ = listed.find((e) => e.coding === 'identity')?.q ?? 0;
  return best.q > 0 && best.q >= identityQ ? best.coding : 'identity';
}

/**
 * Fastest settings of each coding, chosen by measurement (docs/performance.md): on a week of
 * hotspot CSV gzip level 1 runs at about 200 MB/s for a 5.2 × smaller body, level 6 at 67 MB/s
 * for 6.2 ×; brotli quality 1 at 300 MB/s for 5.5 ×. The bytes depend on the input only (gzip
 * writes no time or name), so a window and its data version always give the same body.
 */
function compressor(encoding: Exclude<Encoding, 'identity'>): Transform {
  if (encoding === 'gzip') return createGzip({ level: 1 });
  return createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 1, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } });
}

/**
 * `body` in `encoding`, streamed with backpressure. A body that fails (a count short of its
 * promise, a file swapped) fails this stream too, before the coding's end is written: the
 * reader's decoder sees a truncated stream, never a clean end.
 */
export function encodeBody(body: AsyncIterable<string | Buffer>, encoding: Encoding): AsyncIterable<string | Buffer> {
  if (encoding === 'identity') return body;
  const coder = compressor(encoding);
  pipeline(Readable.from(body, { objectMode: false }), coder).catch(() => {
    // pipeline has destroyed `coder` with the error; whoever reads it gets that error.
  });
  return coder;
}

/** The whole of a small body in `encoding`, for a response sent with its length. */
export async function encodeWhole(body: AsyncIterable<string | Buffer>, encoding: Encoding): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of encodeBody(body, encoding)) parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(parts);
}
