/** A handful of Prometheus counters and gauges, written by hand: the service needs no metrics library. */
export class Metrics {
  private readonly responses = new Map<string, number>();
  private readonly rows = new Map<string, number>();
  private abortedStreams = 0;
  private readonly authFailures = new Map<string, number>();
  private rateLimitStoreErrors = 0;
  private tempSpaceExhausted = 0;

  countAuthFailure(reason: string): void {
    this.authFailures.set(reason, (this.authFailures.get(reason) ?? 0) + 1);
  }

  countRateLimitStoreError(): void {
    this.rateLimitStoreErrors++;
  }

  countResponse(route: string, status: number): void {
    const key = `route="${route}",status="${status}"`;
    this.responses.set(key, (this.responses.get(key) ?? 0) + 1);
  }

  observeExtract(dataset: string, rows: number): void {
    this.rows.set(dataset, (this.rows.get(dataset) ?? 0) + rows);
  }

  countTempSpaceExhausted(): void {
    this.tempSpaceExhausted++;
  }

  countAbortedStream(): void {
    this.abortedStreams++;
  }

  render(gauges: Record<string, number>, counters: Record<string, number> = {}): string {
    const out: string[] = [];
    const family = (name: string, type: string, help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    family('fire_api_responses_total', 'counter', 'HTTP responses by route and status');
    for (const [k, v] of this.responses) out.push(`fire_api_responses_total{${k}} ${v}`);
    family('fire_api_rows_promised_total', 'counter', 'Rows promised by data responses (counted before streaming)');
    for (const [k, v] of this.rows) out.push(`fire_api_rows_promised_total{dataset="${k}"} ${v}`);
    family('fire_api_streams_aborted_total', 'counter', 'Data responses aborted mid-stream (client gone, timeout or short stream)');
    out.push(`fire_api_streams_aborted_total ${this.abortedStreams}`);
    family('fire_api_auth_failures_total', 'counter', 'Data requests refused for a missing, invalid, revoked or expired key');
    for (const [k, v] of this.authFailures) out.push(`fire_api_auth_failures_total{reason="${k}"} ${v}`);
    family('fire_api_rate_limit_store_errors_total', 'counter', 'Rate-limit store (Redis) failures; requests were let through (fail-open)');
    out.push(`fire_api_rate_limit_store_errors_total ${this.rateLimitStoreErrors}`);
    family('fire_api_temp_space_exhausted_total', 'counter', 'Requests answered 503 because TEMP_DIR was full');
    out.push(`fire_api_temp_space_exhausted_total ${this.tempSpaceExhausted}`);
    for (const [name, v] of Object.entries(gauges)) {
      family(name, 'gauge', name.replaceAll('_', ' '));
      out.push(`${name} ${v}`);
    }
    for (const [name, v] of Object.entries(counters)) {
      family(name, 'counter', name.replaceAll('_', ' '));
      out.push(`${name} ${v}`);
    }
    return out.join('\n') + '\n';
  }
}
