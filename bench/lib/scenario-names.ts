/**
 * The bench's scenarios, named for what they measure, in the order the bench reports them. The
 * same names are taken by --only, printed in the table, and key the JSON report and the
 * performance table made from it.
 */
export const SCENARIOS = [
  { name: 'year-csv', measures: 'one-year hotspot CSV vs DuckDB COPY, peak RSS, time to first byte' },
  { name: 'month-geojson', measures: 'one-month hotspot GeoJSON vs DuckDB COPY' },
  { name: 'year-readings-csv', measures: 'one-year sensor-readings CSV vs DuckDB COPY' },
  { name: 'concurrent-year-csv', measures: 'four concurrent one-year hotspot CSV extracts on a fresh server' },
  { name: 'cold-first-byte', measures: 'time to first byte on a fresh server, first request the one-year window (informational)' },
  { name: 'small-windows', measures: '1-hour hotspot GeoJSON windows, 50 connections, autocannon' },
  { name: 'window-sizes', measures: 'rows/s of 1-day, 1-month and 1-year hotspot CSV windows' },
  { name: 'aborts', measures: 'aborted extracts on a fresh server: busy connections and RSS after' },
  { name: 'slow-readers', measures: '8 throttled one-year CSV downloads in flight while 1-hour GeoJSON windows are measured' },
  { name: 'overload', measures: '10 times the best concurrency of 1-hour windows: goodput, p99, memory after' },
  { name: 'throttled-year', measures: 'one throttled one-year CSV download lasting 2.5 times QUERY_TIMEOUT_MS completes' },
  { name: 'year-parquet', measures: "one-year hotspot Parquet (Accept) vs DuckDB COPY (FORMAT parquet); bytes per row beside year-csv's" },
  { name: 'year-arrow', measures: "one-year hotspot Arrow IPC stream (Accept) vs the same COPY; bytes per row beside year-csv's" },
  { name: 'aggregate', measures: 'daily x country, year x 0.25 degree grid and hourly x station aggregates vs DuckDB GROUP BY and the year as CSV; peak RSS' },
  { name: 'soak', measures: 'mixed requests on one server (formats, 304, 400, 404, gzip, OGC pages, hang-ups): RSS, heap, descriptors, temp files, no 5xx' },
] as const;

export type ScenarioName = (typeof SCENARIOS)[number]['name'];

export const SCENARIO_NAMES: readonly ScenarioName[] = SCENARIOS.map((s) => s.name);

export const isScenarioName = (text: string): text is ScenarioName => (SCENARIO_NAMES as readonly string[]).includes(text);
