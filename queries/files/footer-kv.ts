import { footerFields } from '../../shared/parquet/footer-fields.ts';

/** Key-value metadata of a Parquet footer (the bytes between the data and the footer length), read without DuckDB. */
export function footerKeyValues(footer: Uint8Array): Map<string, string> {
  return footerFields(footer).keyValues;
}
