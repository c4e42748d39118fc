import { footerKeyValueMap } from '../shared/parquet/combine-footers.ts';
import { decodeStruct } from '../shared/parquet/thrift-compact.ts';

/**
 * Key-value metadata of a Parquet footer (the bytes between the data and the footer length), read
 * without a DuckDB connection: listings need it for compacted files. A footer that is cut short or
 * forged (counts larger than its bytes) fails at the end of its bytes.
 */
export function footerKeyValues(footer: Uint8Array): Map<string, string> {
  return footerKeyValueMap(decodeStruct(Buffer.from(footer.buffer, footer.byteOffset, footer.byteLength)));
}
