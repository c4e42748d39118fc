import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSampleData } from '../helpers/sample-data.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/** The value of one sample (`name{labels} value`) of the exposition text, or null when absent. */
function sample(text: string, nameAndLabels: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${nameAndLabels} `));
  return line === undefined ? null : Number(line.slice(nameAndLabels.length + 1));
}

describe('/metrics', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(await writeSampleData());
  });
  afterAll(async () => s?.close());

  it('keeps the existing fire_api_* names and adds process and event-loop metrics', async () => {
    const r = await fetch(`${s.url}/metrics`);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await r.text();
    for (const name of ['fire_api_duckdb_connections_busy', 'fire_api_duckdb_requests_queued', 'fire_api_file_checks_warming', 'fire_api_rows_cache_bytes', 'fire_api_rows_cache_hits_total', 'fire_api_rows_cache_misses_total', 'fire_api_aggregate_cache_bytes', 'fire_api_aggregate_cache_hits_total', 'fire_api_aggregate_cache_misses_total', 'fire_api_aggregate_split_cut_total', 'fire_api_aggregate_split_whole_total', 'fire_api_aggregate_split_stopped_total', 'fire_api_renderings_bytes', 'fire_api_renderings_budget_bytes', 'fire_api_renderings_files', 'fire_api_renderings_pending', 'fire_api_renderings_hits_total', 'fire_api_renderings_misses_total', 'fire_api_streams_aborted_total', 'fire_api_rate_limit_store_errors_total']) {
      expect(sample(text, name), name).toBe(0);
    }
    for (const family of ['fire_api_responses_total counter', 'fire_api_rows_promised_total counter', 'fire_api_auth_failures_total counter', 'fire_api_request_duration_seconds histogram', 'fire_api_data_files gauge']) {
      expect(text).toContain(`# TYPE ${family}`);
    }
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(10_000_000);
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
  });

  it('counts rows and body bytes sent (as coded on the wire) per dataset and times requests per route and status class', async () => {
    const ok = await s.get('/api/v1/hotspots?from=2025-08-01&to=2025-08-03&format=csv', { headers: { 'accept-encoding': 'gzip' } });
    const body = Buffer.from(await ok.arrayBuffer());
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-encoding')).toBe('gzip');
    const wireBytes = Number(ok.headers.get('content-length'));
    expect(wireBytes).toBeGreaterThan(0);
    expect(wireBytes).not.toBe(body.length);
    const returned = Number(ok.headers.get('x-returned'));
    expect(returned).toBe(4);
    // HEAD promises rows but sends none; a bad parameter is a 4xx.
    expect((await s.get('/api/v1/hotspots?from=2025-08-01&to=2025-08-03&format=csv', { method: 'HEAD' })).status).toBe(200);
    expect((await s.get('/api/v1/hotspots?from=not-a-date')).status).toBe(400);
    // Counted when each response's connection side closes, a moment after the client has read it.
    let text = '';
    for (let i = 0; i < 100; i++) {
      text = await (await fetch(`${s.url}/metrics`)).text();
      if (sample(text, 'fire_api_request_duration_seconds_count{route="/api/v1/hotspots",status_class="4xx"}') === 1 && sample(text, 'fire_api_rows_sent_total{dataset="hotspots"}') !== null) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(sample(text, 'fire_api_rows_sent_total{dataset="hotspots"}')).toBe(returned);
    expect(sample(text, 'fire_api_response_bytes_total{dataset="hotspots"}')).toBe(wireBytes);
    expect(sample(text, 'fire_api_rows_promised_total{dataset="hotspots"}')).toBe(2 * returned);
    expect(sample(text, 'fire_api_request_duration_seconds_count{route="/api/v1/hotspots",status_class="2xx"}')).toBe(2);
    expect(sample(text, 'fire_api_request_duration_seconds_count{route="/api/v1/hotspots",status_class="4xx"}')).toBe(1);
    expect(sample(text, 'fire_api_request_duration_seconds_bucket{le="+Inf",route="/api/v1/hotspots",status_class="2xx"}')).toBe(2);
    expect(sample(text, 'fire_api_responses_total{route="/api/v1/hotspots",status="400"}')).toBe(1);
    expect(sample(text, 'fire_api_rows_sent_total{dataset="fire-danger"}')).toBeNull();
  });
});
