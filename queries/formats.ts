import type { DatasetDescriptor } from '../datasets/index.ts';
import { PARQUET_MEDIA_TYPE, type WireMeta } from '../shared/wire.ts';
import { arrowRows, csvHeader, csvRows, featureRows, parquetRows, type RowSelect } from './sql/compile.ts';
import { CSV_COPY, FEATURE_COPY, type TextCopy } from './sql/compile-copy.ts';
import { encodeFeatureChunk, type ChunkEncoder } from './encode/encode-chunk.ts';

/** The response formats. `parquet` and `arrow` come from the Accept header; `format` itself keeps its v1 meaning. */
export type Format = 'csv' | 'geojson' | 'parquet' | 'arrow';

/** Rows as text between a prefix and a suffix; the server frames them, the groups are sent as written. */
export interface TextBody {
  kind: 'text';
  /** How DuckDB writes a group's rows, when it writes them (`native`). */
  copy: TextCopy;
  /** How JavaScript turns a chunk of the rows' select into text when DuckDB cannot (not `native`); null: DuckDB always can. */
  encode: ChunkEncoder | null;
  /** What the row writers put before every row (FEATURE_COPY, encodeFeatureChunk): the response drops the first. */
  separator: string;
  /** Sent before the rows. */
  prefix(d: DatasetDescriptor, meta: WireMeta): string;
  /** Sent after the rows. */
  suffix: string;
  /**
   * A window of at most one group's rows (and ROW_LIMIT) is written whole by COPY before the
   * response starts, with neither count nor cut; only such rows are kept in the rows cache.
   */
  wholeWindow(d: DatasetDescriptor): boolean;
}

/** One file or stream assembled from every group's columnar file; the response's meta travels inside it. */
export interface ColumnarBody {
  kind: 'columnar';
  /** A Parquet file (every group's row groups under one footer) or an Arrow IPC stream (every group's batches). */
  assembly: 'parquet' | 'arrow';
}

/** Everything that differs from one response format to another. */
export interface FormatRules {
  /** The Content-Type sent, and the media type Accept names the format by. */
  mediaType: string;
  /**
   * pinned: `format` chooses it whatever Accept says; default: what `format` gives unless Accept
   * prefers an `accept` format; accept: chosen by its media type in Accept.
   */
  negotiation: 'pinned' | 'default' | 'accept';
  /** Its select list (and join), in the sql/ compile modules. */
  rows: RowSelect;
  /** Readings carry their station's point: the stations' files are listed, checked and joined. */
  stationPoints: boolean;
  /**
   * DuckDB writes the rows of dataset `d` into the group files itself; otherwise they go through
   * JavaScript on one thread, where a second group in flight would only add memory.
   */
  native(d: DatasetDescriptor): boolean;
  /** Worth an HTTP content coding when the client accepts one; Parquet is compressed inside already. */
  compress: boolean;
  body: TextBody | ColumnarBody;
}

const always = () => true;
const never = () => false;
/** DuckDB here cannot turn WKB into GeoJSON: those Features are built in JavaScript. */
const textGeometry = (d: DatasetDescriptor) => d.geometry.kind !== 'wkb';

export const FORMATS: Readonly<Record<Format, FormatRules>> = {
  csv: {
    mediaType: 'text/csv; charset=utf-8',
    negotiation: 'pinned',
    rows: csvRows,
    stationPoints: false,
    native: always,
    compress: true,
    body: { kind: 'text', copy: CSV_COPY, encode: null, separator: '', prefix: (d) => csvHeader(d), suffix: '', wholeWindow: always },
  },
  geojson: {
    mediaType: 'application/geo+json',
    negotiation: 'default',
    rows: featureRows,
    stationPoints: true,
    native: textGeometry,
    compress: true,
    body: {
      kind: 'text',
      copy: FEATURE_COPY,
      encode: encodeFeatureChunk,
      separator: ',',
      prefix: (_, meta) => `{"type":"FeatureCollection","meta":${JSON.stringify(meta)},"features":[`,
      suffix: ']}\n',
      wholeWindow: textGeometry,
    },
  },
  parquet: {
    mediaType: PARQUET_MEDIA_TYPE,
    negotiation: 'accept',
    rows: parquetRows,
    stationPoints: false,
    native: always,
    compress: false,
    body: { kind: 'columnar', assembly: 'parquet' },
  },
  arrow: {
    mediaType: 'application/vnd.apache.arrow.stream',
    negotiation: 'accept',
    rows: arrowRows,
    stationPoints: false,
    native: never,
    compress: true,
    body: { kind: 'columnar', assembly: 'arrow' },
  },
};

/** The formats by name, in the table's order. */
export const FORMAT_NAMES = Object.keys(FORMATS) as Format[];

/** The text body of `format` when a window of dataset `d` may be written whole (and its rows cached); null otherwise. */
export function wholeWindowBody(format: Format, d: DatasetDescriptor): TextBody | null {
  const body = FORMATS[format].body;
  return body.kind === 'text' && body.wholeWindow(d) ? body : null;
}
