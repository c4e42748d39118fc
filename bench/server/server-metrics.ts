/** Samples of the server's `/metrics` (Prometheus text), read over HTTP like any scraper would; null where a name is absent. */
export async function readMetrics(baseUrl: string, names: readonly string[]): Promise<Record<string, number | null>> {
  const response = await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(5_000) });
  if (!response.ok) throw new Error(`GET /metrics answered ${response.status}`);
  const text = await response.text();
  // Unlabelled samples only (`name value`): a labelled family would need summing and is not asked here.
  const one = (name: string) => {
    const match = new RegExp(`^${name} ([0-9.eE+-]+)$`, 'm').exec(text);
    return match ? Number(match[1]) : null;
  };
  return Object.fromEntries(names.map((n) => [n, one(n)]));
}

export const readMetric = async (baseUrl: string, name: string): Promise<number | null> => (await readMetrics(baseUrl, [name]))[name] ?? null;

export interface GaugeWait {
  /** The last value read (null: the server does not export the metric). */
  value: number | null;
  /** From the first read to the one that met the target, or to the timeout. */
  waitedMs: number;
}

/**
 * Polls `name` until it is at most `target` or `timeoutMs` passed: a connection is given back
 * after the query was interrupted, which takes a moment after the client has gone.
 */
export async function waitForMetricAtMost(baseUrl: string, name: string, target: number, timeoutMs: number, pollMs = 100): Promise<GaugeWait> {
  const started = performance.now();
  for (;;) {
    const value = await readMetric(baseUrl, name);
    const waitedMs = performance.now() - started;
    if (value === null || value <= target || waitedMs >= timeoutMs) return { value, waitedMs };
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/**
 * Waits until no DuckDB connection has been busy, and the start-up file checks have finished, for
 * `quietMs` (polled every 100 ms), at most `timeoutMs`: a warm measurement should not share the
 * machine with the checks, nor do them itself. Returns the time waited.
 */
export async function waitForQuiet(baseUrl: string, quietMs = 500, timeoutMs = 30_000): Promise<number> {
  const started = performance.now();
  let quietSince = started;
  while (performance.now() - started < timeoutMs) {
    const busy = await readMetric(baseUrl, 'fire_api_duckdb_connections_busy');
    const warming = (await readMetric(baseUrl, 'fire_api_file_checks_warming')) ?? 0;
    const now = performance.now();
    if (busy === null) return now - started;
    if (busy > 0 || warming > 0) quietSince = now;
    else if (now - quietSince >= quietMs) return now - started;
    await new Promise((r) => setTimeout(r, 100));
  }
  return performance.now() - started;
}

export interface MetricSampler {
  /** Stops polling (idempotent); the highest value seen per metric (NaN: never read). */
  stop(): Record<string, number>;
}

/**
 * Polls /metrics while a scenario runs, keeping each gauge's maximum: requests queued for a
 * DuckDB connection say the pool, not the CPU, set the pace. One poll in flight at a time, so a
 * slow server is not also flooded with scrapes.
 */
export function sampleMetrics(baseUrl: string, names: readonly string[], intervalMs = 250): MetricSampler {
  const max: Record<string, number> = Object.fromEntries(names.map((n) => [n, Number.NaN]));
  let stopped = false;
  const poll = async () => {
    while (!stopped) {
      const values = await readMetrics(baseUrl, names).catch(() => ({}) as Record<string, number | null>);
      for (const name of names) {
        const v = values[name];
        if (typeof v === 'number' && !(v <= max[name]!)) max[name] = v;
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  };
  void poll();
  return {
    stop: () => {
      stopped = true;
      return { ...max };
    },
  };
}

/** The pool gauges the server exports (server/routes/operations.ts). */
export const POOL_GAUGES = ['fire_api_duckdb_connections_busy', 'fire_api_duckdb_requests_queued'] as const;
