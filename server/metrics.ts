import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds: small windows answer in milliseconds, a long extract streams for minutes. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

const statusClass = (status: number) => `${Math.floor(status / 100)}xx`;

/**
 * The service's Prometheus metrics (prom-client), one registry per app: request counts and
 * durations, rows and bytes served, authentication and rate-limit failures, data file states, the
 * figures handed to `render`, and the process and event-loop metrics of prom-client's defaults.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly responses = this.counter('fire_api_responses_total', 'HTTP responses by route and status', ['route', 'status']);
  private readonly rows = this.counter('fire_api_rows_promised_total', 'Rows promised by data responses (counted before streaming)', ['dataset']);
  private readonly ways = this.counter('fire_api_extracts_total', 'Data responses by how their rows were made: cache (rows cache), memory (one statement, small window), rendered (from renderings of its files), copy (whole window to temp files), stream (group by group)', ['dataset', 'way']);
  private readonly abortedStreams = this.counter('fire_api_streams_aborted_total', 'Data responses aborted mid-stream (client gone, timeout or short stream)');
  private readonly authFailures = this.counter('fire_api_auth_failures_total', 'Data requests refused for a missing, invalid, revoked or expired key', ['reason']);
  private readonly rateLimitStoreErrors = this.counter('fire_api_rate_limit_store_errors_total', 'Rate-limit store (Redis) failures; requests were let through (fail-open)');
  private readonly internalErrors = this.counter('fire_api_internal_errors_total', 'Requests answered 500: a bug in the service (logged at error level with its stack)');
  private readonly tempSpaceExhausted = this.counter('fire_api_temp_space_exhausted_total', 'Requests answered 503 because TEMP_DIR was full');
  private readonly rowsSent = this.counter('fire_api_rows_sent_total', 'Rows of data responses sent in full (HEAD and cut transfers excluded)', ['dataset']);
  private readonly bytesSent = this.counter('fire_api_response_bytes_total', 'Body bytes of data responses handed to the connection, cut transfers included', ['dataset']);
  private readonly duration = new Histogram({
    name: 'fire_api_request_duration_seconds',
    help: 'Time from request to the last byte of the response (streams included), by route and status class',
    labelNames: ['route', 'status_class'],
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  private readonly dataFiles = new Gauge({
    name: 'fire_api_data_files',
    help: 'Data files checked so far by dataset and state: ok, failing (windows touching them answer 503), unsorted (sorted on the fly)',
    labelNames: ['dataset', 'state'],
    registers: [this.registry],
  });
  private readonly correctionModels = new Gauge({
    name: 'fire_api_correction_models',
    help: 'Correction model files by dataset and state: published (valid), failing (unreadable or invalid: the corrected series answers 503)',
    labelNames: ['dataset', 'state'],
    registers: [this.registry],
  });
  private readonly handed = new Map<string, Gauge | Counter>();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  private counter(name: string, help: string, labelNames: string[] = []): Counter {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  countAuthFailure(reason: string): void {
    this.authFailures.inc({ reason });
  }

  countRateLimitStoreError(): void {
    this.rateLimitStoreErrors.inc();
  }

  countResponse(route: string, status: number): void {
    this.responses.inc({ route, status: String(status) });
  }

  observeDuration(route: string, status: number, seconds: number): void {
    this.duration.observe({ route, status_class: statusClass(status) }, seconds);
  }

  observeExtract(dataset: string, rows: number, way: string): void {
    this.rows.inc({ dataset }, rows);
    this.ways.inc({ dataset, way });
  }

  countSent(dataset: string, sent: { rows: number; bytes: number }): void {
    if (sent.rows > 0) this.rowsSent.inc({ dataset }, sent.rows);
    if (sent.bytes > 0) this.bytesSent.inc({ dataset }, sent.bytes);
  }

  countTempSpaceExhausted(): void {
    this.tempSpaceExhausted.inc();
  }

  countInternalError(): void {
    this.internalErrors.inc();
  }

  countAbortedStream(): void {
    this.abortedStreams.inc();
  }

  setDataFiles(dataset: string, state: string, files: number): void {
    this.dataFiles.set({ dataset, state }, files);
  }

  setCorrectionModels(dataset: string, counts: { published: number; failing: number }): void {
    this.correctionModels.set({ dataset, state: 'published' }, counts.published);
    this.correctionModels.set({ dataset, state: 'failing' }, counts.failing);
  }

  /** The exposition text, with `gauges` and `counters` (read by the caller as they are now) included. */
  async render(gauges: Record<string, number>, counters: Record<string, number> = {}): Promise<string> {
    for (const [name, v] of Object.entries(gauges)) (this.handedMetric(name, Gauge) as Gauge).set(v);
    for (const [name, v] of Object.entries(counters)) {
      const c = this.handedMetric(name, Counter) as Counter;
      c.reset();
      c.inc(v);
    }
    return this.registry.metrics();
  }

  private handedMetric(name: string, Kind: typeof Gauge | typeof Counter): Gauge | Counter {
    let m = this.handed.get(name);
    if (!m) this.handed.set(name, (m = new Kind({ name, help: name.replaceAll('_', ' '), registers: [this.registry] })));
    return m;
  }
}
