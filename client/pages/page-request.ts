import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { CsvPageReader, type CsvSink, type PageBody } from './csv-page.ts';
import { counted, ProtocolError, TransferError } from '../errors.ts';
import { GeoJsonPageReader } from './geojson-page.ts';
import { META_HEADER, PARQUET_MEDIA_TYPE, type TextFormat, type WireMeta } from '../../shared/wire.ts';
import { bodyChunks, provenWhole } from './http-page.ts';
import { ParquetPageReader } from './parquet-page.ts';

/** The text formats by `format`; Parquet by `Accept` (each page a whole Parquet file). */
export type Format = TextFormat | 'parquet';

/** The Accept header a page of `format` is asked for with, if any. */
export const acceptOf = (format: Format): string | undefined => (format === 'parquet' ? PARQUET_MEDIA_TYPE : undefined);

/** What identifies one request of a walk; verify rebuilds the identical URL from it. */
export interface PageQuery {
  service: string;
  dataset: string;
  format: Format;
  /** Both null for a dataset without a time window. */
  from: string | null;
  to: string | null;
  parameters: Readonly<Record<string, string>>;
}

export interface PageSink extends CsvSink {
  feature(text: Buffer): void;
  /** Awaited after every received chunk: where buffered output is written, with backpressure. */
  drain(): Promise<void>;
}

export interface PageResult {
  window: WireMeta['window'];
  truncated: boolean;
  nextFrom: string | null;
  dataVersion: string;
  rowLimit: number;
  returned: number;
  rowsSha256: string;
  csvHeader: string | null;
  /** meta.query: the parameters in effect, defaults included (from the body's meta, or X-Query for CSV; null when neither says). */
  query: WireMeta['query'] | null;
}

/**
 * Whether two meta.query echoes say the same: a parameter echoed as null is a filter not given,
 * the same as one not echoed at all, so an extract recorded before a server learned a new filter
 * still compares equal to what that server says now.
 */
export function sameQuery(a: WireMeta['query'] | null, b: WireMeta['query'] | null): boolean {
  const given = (q: WireMeta['query'] | null) => (q === null ? null : JSON.stringify(Object.entries(q).filter(([, v]) => v !== null).sort(([x], [y]) => (x < y ? -1 : 1))));
  return given(a) === given(b);
}

/** Parameters in a fixed order, so a recorded window is re-requested with the very same URL. */
export function pageUrl(q: PageQuery): URL {
  const url = new URL(`${q.service}/api/v1/${q.dataset}`);
  if (q.from !== null) url.searchParams.set('from', q.from);
  if (q.to !== null) url.searchParams.set('to', q.to);
  if (q.format === 'csv') url.searchParams.set('format', 'csv');
  for (const name of Object.keys(q.parameters).sort()) url.searchParams.set(name, q.parameters[name]!);
  return url;
}

const header = (h: IncomingHttpHeaders, name: string): string | null => {
  const v = h[name];
  return typeof v === 'string' ? v : null;
};

function required(h: IncomingHttpHeaders, name: string): string {
  const v = header(h, name);
  if (v === null) throw new ProtocolError(`the response has no ${name} header`);
  return v;
}

function count(h: IncomingHttpHeaders, name: string): number {
  const v = required(h, name);
  if (!/^\d+$/.test(v)) throw new ProtocolError(`${name} is not a count: ${v}`);
  return Number(v);
}

/** The contract's meta headers; sent for both formats, so both are read the same way. */
function readHead(h: IncomingHttpHeaders): Omit<PageResult, 'rowsSha256' | 'csvHeader' | 'query'> {
  const from = header(h, META_HEADER.windowFrom);
  const to = header(h, META_HEADER.windowTo);
  return {
    window: from !== null && to !== null ? { from, to } : null,
    truncated: required(h, META_HEADER.truncated) === 'true',
    nextFrom: header(h, META_HEADER.nextFrom),
    dataVersion: required(h, META_HEADER.dataVersion),
    rowLimit: count(h, META_HEADER.rowLimit),
    returned: count(h, META_HEADER.returned),
  };
}

/** Streams one 200 response through `sink`, counting and hashing its rows; `onRows` sees the running count. */
export async function readPage(res: IncomingMessage, format: Format, sink: PageSink, onRows: (rows: number) => void = () => {}): Promise<PageResult> {
  const head = readHead(res.headers);
  const reader = pageReader(res.headers, format, sink);
  for await (const chunk of bodyChunks(res)) {
    reader.push(chunk);
    onRows(reader.rowCount);
    await sink.drain();
  }
  const body = reader.finish();
  checkRowCount(head.returned, body.returned, wholeBecause(format, res));
  return { ...head, returned: body.returned, rowsSha256: body.rowsSha256, csvHeader: body.csvHeader, query: queryOf(body) ?? headerQuery(res.headers) };
}

/**
 * Why a page that ended without error is the server's whole answer, or null when it may be a cut
 * that fell between two records: only CSV has no end of its own, so only its Content-Length can say.
 */
function wholeBecause(format: Format, res: IncomingMessage): string | null {
  if (format === 'geojson') return 'its GeoJSON document is closed';
  if (format === 'parquet') return 'its Parquet file ends with a readable footer';
  return provenWhole(res) ? 'it holds every byte of its Content-Length' : null;
}

/**
 * A cut only ever takes rows away from the end. Fewer rows than X-Returned in a page that may be a
 * cut is retried; fewer in a page known to be whole, or more in any page, is the server's answer,
 * and final.
 */
function checkRowCount(promised: number, held: number, whole: string | null): void {
  if (held > promised) throw new ProtocolError(`the response holds ${counted(held, 'row')}, more than the ${promised} of its X-Returned`);
  if (held === promised) return;
  if (whole !== null) throw new ProtocolError(`the response holds ${counted(held, 'row')}, fewer than the ${promised} of its X-Returned, and is complete: ${whole}`);
  throw new TransferError(`the response ended after ${held} of the ${counted(promised, 'row')} of its X-Returned, cut on a record boundary`);
}

function pageReader(h: IncomingHttpHeaders, format: Format, sink: PageSink): CsvPageReader | GeoJsonPageReader | ParquetPageReader {
  if (format === 'csv') return new CsvPageReader(sink);
  if (format === 'geojson') return new GeoJsonPageReader((f) => sink.feature(f));
  // A server from before Parquet answers the Accept with GeoJSON: say so rather than misread it.
  const type = header(h, 'content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== PARQUET_MEDIA_TYPE) throw new ProtocolError(`asked for Parquet, the service answered ${type ?? 'without a Content-Type'}; it may not serve Parquet`);
  return new ParquetPageReader((bytes) => sink.data(bytes));
}

function queryOf(body: PageBody): WireMeta['query'] | null {
  if (!body.meta) return null;
  const q = body.meta.query;
  if (typeof q !== 'object' || q === null) throw new ProtocolError('meta.query is missing');
  return q as WireMeta['query'];
}

/** X-Query: meta.query as a header, the one place a CSV page says which parameters (and correction model) were in effect. */
function headerQuery(h: IncomingHttpHeaders): WireMeta['query'] | null {
  const text = header(h, META_HEADER.query);
  if (text === null) return null;
  let q: unknown;
  try {
    q = JSON.parse(text);
  } catch {
    throw new ProtocolError(`${META_HEADER.query} is not JSON`);
  }
  const plain = typeof q === 'object' && q !== null && !Array.isArray(q) && Object.values(q).every((v) => v === null || typeof v === 'string');
  if (!plain) throw new ProtocolError(`${META_HEADER.query} is not an object of parameters`);
  return q as WireMeta['query'];
}

/** A sink that keeps nothing: verify only needs the counts and hashes. */
export const discardSink = (onHeader: (text: string) => void = () => {}): PageSink => ({
  header: onHeader,
  data: () => {},
  feature: () => {},
  drain: async () => {},
});
