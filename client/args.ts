import { parseArgs } from 'node:util';
import { UsageError } from '../shared/command-io.ts';
import { SIMULATED_DATASETS, WINDOWLESS_DATASETS } from '../shared/wire.ts';
import type { Format } from './pages/page-request.ts';
import { DEFAULT_RETRY, type RetryPolicy } from './retry.ts';

export const EXTRACT_USAGE = `Usage: fire-api extract <dataset> --from A --to B --out FILE [options]
       fire-api extract sensor-stations --out FILE [options]   (no time window)
  --format csv|geojson|parquet
                           default: csv when FILE ends in .csv, parquet when it ends in .parquet, else geojson;
                           parquet: one GeoParquet file for the whole walk, the rows and order of the CSV
  --country CC --model M --level L --series S --bbox=W,S,E,N --station-id ID[,ID...] --area-code C
  --correction-model ID
                           dataset parameters, sent with every request (--bbox=... with '=': W may be negative);
                           with --series corrected and no --correction-model, the model the first window was
                           corrected with is pinned for the rest of the walk and in the manifest
  --interval I --group-by K[,K...] --cell C --stats S[,S...]
                           with <dataset>/aggregate (e.g. hotspots/aggregate): exact counts and stats per
                           bucket and group instead of rows, walked and cited like rows (csv, geojson or
                           parquet; parquet with a geometry column for --group-by grid or stationId)
  --include-simulated      sensor datasets: keep simulated stations (the extract is then marked not citable);
                           without it sensor-stations and sensor-readings are requested with simulated=false
  --base-url URL           service address (default FIRE_API_URL or http://127.0.0.1:8080)
  --key KEY                API key (default FIRE_API_KEY; prefer the variable: arguments are visible to other users)
  --retries N              attempts per request on 429, 503 or a broken transfer (default ${DEFAULT_RETRY.attempts})
  --restart                discard an interrupted run of this FILE instead of resuming it
  --force                  replace FILE if it exists
Writes FILE and FILE.manifest.json (with a citation: text, BibTeX, CSL-JSON); an interrupted run
resumes from its last completed window.
`;

export const VERIFY_USAGE = `Usage: fire-api verify FILE.manifest.json [--key KEY] [--base-url URL] [--retries N] [--json]
Re-requests every window of the manifest and reports each as identical or changed.
Exit code: 0 all identical, 1 something changed, 2 usage, 3 could not verify.
`;

/** A dataset, or its aggregates (`hotspots/aggregate`). */
const DATASET_NAME = /^([a-z][a-z0-9-]{0,63})(\/aggregate)?$/;
/** Command-line option -> query parameter. */
const PARAMETERS = { country: 'country', level: 'level', model: 'model', series: 'series', bbox: 'bbox', 'station-id': 'stationId', 'area-code': 'areaCode', 'correction-model': 'correctionModel' } as const;
/** Options of an aggregate only. */
const AGGREGATE_PARAMETERS = { interval: 'interval', 'group-by': 'groupBy', cell: 'cell', stats: 'stats' } as const;

export interface ExtractOptions {
  service: string;
  key: string;
  dataset: string;
  format: Format;
  /** Null for a dataset without a time window (sensor-stations). */
  from: string | null;
  to: string | null;
  parameters: Record<string, string>;
  out: string;
  retry: RetryPolicy;
  restart: boolean;
  force: boolean;
}

export interface VerifyOptions {
  manifest: string;
  key: string;
  service: string | null;
  retry: RetryPolicy;
  json: boolean;
}

function serviceUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--base-url is not a URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--base-url must be http:// or https://');
  if (url.search || url.hash) throw new UsageError('--base-url must not carry a query or fragment');
  return url.href.replace(/\/+$/, '');
}

function apiKey(given: string | undefined, env: NodeJS.ProcessEnv): string {
  const key = given ?? env.FIRE_API_KEY;
  if (!key) throw new UsageError('no API key: set FIRE_API_KEY or pass --key');
  return key;
}

function retryPolicy(value: string | undefined): RetryPolicy {
  if (value === undefined) return DEFAULT_RETRY;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new UsageError('--retries must be a whole number from 1 to 100');
  return { ...DEFAULT_RETRY, attempts: n };
}

function outputFormat(format: string | undefined, out: string): Format {
  const name = out.toLowerCase();
  if (format === undefined) return name.endsWith('.csv') ? 'csv' : name.endsWith('.parquet') ? 'parquet' : 'geojson';
  if (format !== 'csv' && format !== 'geojson' && format !== 'parquet') throw new UsageError('--format must be csv, geojson or parquet');
  return format;
}

/** The dataset parameters given, and simulated=false for a sensor dataset unless --include-simulated. */
function queryParameters(dataset: string, aggregate: boolean, v: Partial<Record<keyof typeof PARAMETERS | keyof typeof AGGREGATE_PARAMETERS | 'include-simulated', string | boolean>>): Record<string, string> {
  const parameters: Record<string, string> = {};
  for (const [option, name] of Object.entries({ ...PARAMETERS, ...AGGREGATE_PARAMETERS })) {
    const value = v[option as keyof typeof PARAMETERS];
    if (typeof value !== 'string') continue;
    if (!aggregate && option in AGGREGATE_PARAMETERS) throw new UsageError(`--${option} applies to an aggregate only, e.g. ${dataset}/aggregate`);
    parameters[name] = value;
  }
  const sensor = SIMULATED_DATASETS.includes(dataset);
  if (v['include-simulated'] === true && !sensor) throw new UsageError(`--include-simulated applies to ${SIMULATED_DATASETS.join(' and ')} only`);
  if (sensor && v['include-simulated'] !== true) parameters.simulated = 'false';
  return parameters;
}

export function parseExtractArgs(args: string[], env: NodeJS.ProcessEnv): ExtractOptions {
  const text = { type: 'string' } as const;
  const flag = { type: 'boolean' } as const;
  const parameterOptions = Object.fromEntries([...Object.keys(PARAMETERS), ...Object.keys(AGGREGATE_PARAMETERS)].map((k) => [k, text])) as Record<keyof typeof PARAMETERS | keyof typeof AGGREGATE_PARAMETERS, typeof text>;
  const options = { from: text, to: text, format: text, out: text, 'base-url': text, key: text, retries: text, restart: flag, force: flag, 'include-simulated': flag, ...parameterOptions };
  const { values: v, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
  const [dataset, ...extra] = positionals;
  if (!dataset || extra.length) throw new UsageError('extract needs exactly one dataset, e.g. hotspots');
  const name = DATASET_NAME.exec(dataset);
  if (!name) throw new UsageError(`not a dataset name: ${dataset}`);
  const [base, aggregate] = [name[1]!, name[2] !== undefined];
  const windowless = WINDOWLESS_DATASETS.includes(base);
  if (windowless && (v.from !== undefined || v.to !== undefined)) throw new UsageError(`${dataset} has no time window: leave out --from and --to`);
  if (!windowless && (!v.from || !v.to)) throw new UsageError('extract needs --from and --to: a reproducible extract names its window');
  if (!v.out) throw new UsageError('extract needs --out FILE');
  const parameters = queryParameters(base, aggregate, v);
  const format = outputFormat(v.format, v.out);
  return {
    service: serviceUrl(v['base-url'] ?? env.FIRE_API_URL ?? 'http://127.0.0.1:8080'),
    key: apiKey(v.key, env),
    dataset,
    format,
    from: v.from ?? null,
    to: v.to ?? null,
    parameters,
    out: v.out,
    retry: retryPolicy(v.retries),
    restart: v.restart === true,
    force: v.force === true,
  };
}

export function parseVerifyArgs(args: string[], env: NodeJS.ProcessEnv): VerifyOptions {
  const text = { type: 'string' } as const;
  const options = { key: text, 'base-url': text, retries: text, json: { type: 'boolean' } } as const;
  const { values: v, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
  if (positionals.length !== 1) throw new UsageError('verify needs exactly one manifest file');
  return {
    manifest: positionals[0]!,
    key: apiKey(v.key, env),
    service: v['base-url'] === undefined ? null : serviceUrl(v['base-url']),
    retry: retryPolicy(v.retries),
    json: v.json === true,
  };
}
