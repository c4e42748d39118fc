import { fetchExtract, type HttpRun, type WireFormat } from '../http/http-run.ts';
import type { DayWindow } from '../lib/options.ts';
import { runReference, type ReferenceRun } from './reference.ts';
import { readCpuSeconds, sampleRss } from '../server/rss.ts';
import type { ScenarioName } from '../lib/scenario-names.ts';
import { waitForMetricAtMost } from '../server/server-metrics.ts';
import type { ServerProcess } from '../server/server-process.ts';

export interface ScenarioSpec {
  name: ScenarioName;
  title: string;
  dataset: string;
  timeColumn: string;
  orderBy: readonly string[];
  window: DayWindow;
  format: WireFormat;
  /** Rows DuckDB counted in the window before the server was asked. */
  expectedRows: number;
}

export interface ScenarioResult {
  name: ScenarioName;
  title: string;
  path: string;
  window: DayWindow;
  status: number;
  wallSeconds: number;
  headersMs: number;
  firstByteMs: number;
  rows: number;
  bytes: number;
  rowsPerSecond: number;
  peakRssMb: number;
  rssSamples: number;
  serverCpuSeconds: number;
  clientCpuSeconds: number;
  returnedHeader: number | null;
  expectedRows: number;
  referenceSql: string;
  referenceSeconds: number;
  referenceRows: number;
  referenceBytes: number;
  /** server wall time / DuckDB COPY wall time: below 1 the server beats writing a file. */
  ratio: number;
  /**
   * GeoJSON only: DuckDB's JSON writer writing the same rows as Feature objects (best of its
   * runs), beside the flat COPY; `ratio` is the server's wall time ÷ its wall time. Null otherwise.
   */
  featureReference: { seconds: number; rows: number; bytes: number; ratio: number; runsSeconds: number[] } | null;
  complete: boolean;
  /** Received = X-Returned = DuckDB's count = rows COPY wrote. */
  rowsMatch: boolean;
  /**
   * With RENDER_CACHE_MB: the first request, before the window's files were rendered (its time and
   * peak RSS), and how long their renderings took after it; the runs compared are the ones after. Null otherwise.
   */
  beforeRendering: { seconds: number; peakRssMb: number; renderedAfterSeconds: number; pendingAfter: number | null } | null;
  /** Wall time of every run of each side (the figures use the fastest of each). */
  serverRunsSeconds: number[];
  referenceRunsSeconds: number[];
}

export const extractPath = (s: Pick<ScenarioSpec, 'dataset' | 'window' | 'format'>): string =>
  `/api/v1/${s.dataset}?from=${s.window.from}&to=${s.window.to}${s.format === 'csv' ? '&format=csv' : ''}`;

export interface MeasuredRequest extends HttpRun {
  peakRssMb: number;
  rssSamples: number;
  cpuSeconds: number;
  /** CPU the bench itself spent receiving: it shares the machine's cores with the server. */
  clientCpuSeconds: number;
}

/** One measured request: RSS sampled from /proc every 50 ms, server and client CPU time read before and after. */
export async function measureRequest(server: ServerProcess, path: string, format: WireFormat): Promise<MeasuredRequest> {
  server.assertAlive();
  const cpuBefore = readCpuSeconds(server.pid) ?? Number.NaN;
  const clientBefore = process.cpuUsage();
  const sampler = sampleRss(server.pid);
  const run = await fetchExtract(server.baseUrl + path, format, server.requestHeaders).finally(() => sampler.stop());
  const rss = sampler.stop();
  const client = process.cpuUsage(clientBefore);
  const cpuSeconds = (readCpuSeconds(server.pid) ?? Number.NaN) - cpuBefore;
  server.assertAlive();
  return { ...run, peakRssMb: rss.peakMb, rssSamples: rss.samples, cpuSeconds, clientCpuSeconds: (client.user + client.system) / 1e6 };
}

/**
 * Runs of each side: the server's extract and DuckDB's COPY alternate (never concurrently), and the
 * ratio compares the best of each, so a hiccup of the shared machine in one run weighs on neither.
 */
export const RUNS_PER_SIDE = 2;

const REFERENCE_FORMAT = { csv: 'csv', geojson: 'json', parquet: 'parquet', arrow: 'parquet' } as const satisfies Record<WireFormat, string>;

const fastest = <T extends { wallMs: number }>(xs: T[]) => xs.reduce((a, b) => (b.wallMs < a.wallMs ? b : a));

/** The Feature objects' COPY beside the server's best run; null when the scenario has none. */
function featureReferenceOf(serverMs: number, runs: readonly ReferenceRun[]): ScenarioResult['featureReference'] {
  if (runs.length === 0) return null;
  const best = fastest([...runs]);
  return { seconds: best.wallMs / 1000, rows: best.rows, bytes: best.bytes, ratio: serverMs / best.wallMs, runsSeconds: runs.map((r) => r.wallMs / 1000) };
}

/** How long the bench waits for a window's files to be rendered after its first request. */
const RENDER_WAIT_MS = 900_000;

/**
 * The window asked once before its files are rendered (measured), then their renderings waited for:
 * they start once the response is over and no request uses DuckDB, and nothing else asks the server meanwhile.
 */
async function untilRendered(server: ServerProcess, path: string, format: WireFormat): Promise<NonNullable<ScenarioResult['beforeRendering']>> {
  const first = await measureRequest(server, path, format);
  // The files are queued when the server closes the response, a moment after the client has read it.
  await new Promise((r) => setTimeout(r, 500));
  const wait = await waitForMetricAtMost(server.baseUrl, 'fire_api_renderings_pending', 0, RENDER_WAIT_MS, 250);
  return { seconds: first.wallMs / 1000, peakRssMb: first.peakRssMb, renderedAfterSeconds: (wait.waitedMs + 500) / 1000, pendingAfter: wait.value };
}

/** The server's extract over HTTP and DuckDB's COPY of the same ordered SELECT (and, for GeoJSON, of the Features), alternating. */
export async function runScenario(
  server: ServerProcess,
  spec: ScenarioSpec,
  engine: { dataDir: string; threads: number; memoryLimit: string },
  renders = false,
): Promise<ScenarioResult> {
  const path = extractPath(spec);
  const beforeRendering = renders ? await untilRendered(server, path, spec.format) : null;
  const runs: Awaited<ReturnType<typeof measureRequest>>[] = [];
  const references: ReferenceRun[] = [];
  const featureReferences: ReferenceRun[] = [];
  const { dataset, timeColumn, orderBy, window } = spec;
  const ask = { ...engine, dataset, timeColumn, orderBy, window, format: REFERENCE_FORMAT[spec.format] };
  for (let i = 0; i < RUNS_PER_SIDE; i++) {
    runs.push(await measureRequest(server, path, spec.format));
    references.push(await runReference(ask));
    if (spec.format === 'geojson') featureReferences.push(await runReference({ ...ask, features: true }));
  }
  // The fastest run's times; the highest memory of any run; every run must have been complete.
  const run = { ...fastest(runs), peakRssMb: Math.max(...runs.map((r) => r.peakRssMb)), complete: runs.every((r) => r.complete), status: runs.find((r) => r.status !== 200)?.status ?? 200 };
  const reference = fastest(references);
  const wallSeconds = run.wallMs / 1000;
  const referenceSeconds = reference.wallMs / 1000;
  return {
    name: spec.name,
    title: spec.title,
    path,
    window: spec.window,
    status: run.status,
    wallSeconds,
    headersMs: run.headersMs,
    firstByteMs: run.firstByteMs,
    rows: run.rows,
    bytes: run.bytes,
    rowsPerSecond: run.rows / wallSeconds,
    peakRssMb: run.peakRssMb,
    rssSamples: run.rssSamples,
    serverCpuSeconds: run.cpuSeconds,
    clientCpuSeconds: run.clientCpuSeconds,
    returnedHeader: run.returnedHeader,
    expectedRows: spec.expectedRows,
    referenceSql: reference.sql,
    referenceSeconds,
    referenceRows: reference.rows,
    referenceBytes: reference.bytes,
    ratio: wallSeconds / referenceSeconds,
    featureReference: featureReferenceOf(run.wallMs, featureReferences),
    beforeRendering,
    complete: run.status === 200 && run.complete && (beforeRendering === null || beforeRendering.pendingAfter === 0),
    rowsMatch: runs.every((r) => r.rows === r.returnedHeader && r.rows === spec.expectedRows) && [...references, ...featureReferences].every((r) => r.rows === spec.expectedRows),
    serverRunsSeconds: runs.map((r) => r.wallMs / 1000),
    referenceRunsSeconds: references.map((r) => r.wallMs / 1000),
  };
}
