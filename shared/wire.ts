/**
 * What the service and its client agree on over HTTP: the `meta` block and the headers that carry
 * it. Both programs import this module; neither imports the other.
 */

/** The text formats selected by `format` (v1: `csv`, anything else GeoJSON). */
export type TextFormat = 'csv' | 'geojson';

export interface WireWindow {
  from: string;
  to: string;
}

export interface WireObservation {
  chainRan: boolean;
  lastSuccessUtc: string | null;
  ageSeconds: number | null;
}

/** The `meta` member of a FeatureCollection, written before `features`. */
export interface WireMeta {
  dataset: string;
  window: WireWindow | null;
  /** Every parameter in effect other than the window, defaults included; null: filter not given. */
  query: Record<string, string | null>;
  truncated: boolean;
  rowLimit: number;
  returned: number;
  next: WireWindow | null;
  observation: WireObservation;
  dataVersion: string;
}

/** Header names (lower case, as Node reports them) that carry `meta` in every data response. */
export const META_HEADER = {
  windowFrom: 'x-window-from',
  windowTo: 'x-window-to',
  truncated: 'x-truncated',
  nextFrom: 'x-next-from',
  rowLimit: 'x-row-limit',
  returned: 'x-returned',
  chainLastSuccess: 'x-chain-last-success',
  dataVersion: 'x-data-version',
  query: 'x-query',
} as const;

/** The media type that asks for (and labels) a Parquet response. */
export const PARQUET_MEDIA_TYPE = 'application/vnd.apache.parquet';

/** The key of the `meta` block in a columnar file's own metadata (Parquet key-value, Arrow schema metadata). */
export const COLUMNAR_META_KEY = 'fire_api:meta';

/** The service's name as a citation names it. */
export const SERVICE_NAME = 'Research Read API';

/** Datasets whose rows carry `simulated` and that take `simulated=true|false`: a citable extract sends `false`. */
export const SIMULATED_DATASETS: readonly string[] = ['sensor-stations', 'sensor-readings'];

/** Datasets without a time window: no `from` or `to`, one response holds the whole registry. */
export const WINDOWLESS_DATASETS: readonly string[] = ['sensor-stations'];
