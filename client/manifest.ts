import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ClientError } from './errors.ts';

const Window = z.object({ from: z.string(), to: z.string() });
const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/** One request of the walk, as sent and as answered. */
export const PageRecord = z.object({
  index: z.number().int().min(0),
  /** The query's window exactly as sent: `from` is the previous page's next.from, `to` never changes. Null without a window. */
  request: Window.nullable(),
  /** The window the server says it used (X-Window-From / X-Window-To). */
  window: Window.nullable(),
  truncated: z.boolean(),
  /** next.from (X-Next-From) of a truncated page, else null. */
  nextFrom: z.string().nullable(),
  dataVersion: z.string(),
  returned: z.number().int().min(0),
  /** Index of the page's first row among the file's rows (0-based). */
  firstRow: z.number().int().min(0),
  rowsSha256: Sha256,
  fetchedAtUtc: z.string(),
});
export type PageRecord = z.infer<typeof PageRecord>;

export const ROWS_HASH_DEFINITION =
  "csv: SHA-256 of the page's data records exactly as served, i.e. the response bytes after its header line (every record ends in LF). " +
  "geojson: SHA-256 of the page's features exactly as served (compact JSON, one per line in the file, without the separating comma), joined by LF with no trailing LF. " +
  "parquet: SHA-256 of the page's row-group bytes exactly as served, i.e. the response (one Parquet file) between its leading PAR1 and its footer; the footer, which holds the page's meta, is left out. " +
  'A CSV or GeoJSON page without rows hashes the empty string.';

export const Manifest = z.object({
  manifestVersion: z.literal(1),
  tool: z.object({ name: z.string(), version: z.string() }),
  service: z.string(),
  dataset: z.string(),
  format: z.enum(['csv', 'geojson', 'parquet']),
  /** The window as given on the command line; null for a dataset without one. */
  window: Window.nullable(),
  /** Every other parameter as given (sent with every request). */
  parameters: z.record(z.string(), z.string()),
  /** The server's meta.query: parameters in effect, defaults included (GeoJSON only; CSV does not carry it). */
  queryInEffect: z.record(z.string(), z.string().nullable()).nullable(),
  csvHeader: z.string().nullable(),
  rowLimit: z.number().int().nullable(),
  startedAtUtc: z.string(),
  completedAtUtc: z.string(),
  hashes: z.object({ rowsSha256: z.string(), fileSha256: z.string() }),
  pages: z.array(PageRecord),
  rows: z.number().int().min(0),
  file: z.object({ name: z.string(), bytes: z.number().int().min(0), sha256: Sha256 }),
  /**
   * Whether the extract may be cited as observations: false when it includes simulated series.
   * Optional only so that manifests written before it existed still verify.
   */
  citable: z.boolean().optional(),
  /** `excluded` (simulated=false sent), `included` (--include-simulated), `none` (the dataset has no simulated series). */
  simulatedSeries: z.enum(['excluded', 'included', 'none']).optional(),
  /**
   * The correction model the values were corrected with (series=corrected), null when none was
   * applied; absent for data without a correction layer.
   */
  correctionModel: z.string().nullable().optional(),
  citation: z.object({ text: z.string(), bibtex: z.string(), cslJson: z.record(z.string(), z.unknown()) }).optional(),
});
export type Manifest = z.infer<typeof Manifest>;

export async function readManifest(file: string): Promise<Manifest> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ClientError(`cannot read ${file}: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ClientError(`${file} is not JSON`);
  }
  const parsed = Manifest.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ClientError(`${file} is not an extract manifest (${issue?.path.join('.') || 'root'}: ${issue?.message ?? 'invalid'})`);
  }
  return parsed.data;
}
