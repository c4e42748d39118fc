import { fetchExtract } from '../http/http-run.ts';
import { sampleRss } from '../server/rss.ts';
import type { ServerProcess } from '../server/server-process.ts';
import { bearer } from '../measure/session.ts';
import { loadRun, type LoadRun } from './load-run.ts';
import { fire, type SmallWindowsAsk } from './small-windows.ts';
import { readMetric } from '../server/server-metrics.ts';
import { sampleDirectory } from '../server/temp-disk.ts';

export interface SlowReadersAsk {
  small: SmallWindowsAsk;
  /** The one-year CSV each slow client downloads. */
  yearPath: string;
  downloads: number;
  bytesPerSecond: number;
  /** The server's TEMP_DIR: where groups written ahead for slow clients are kept. */
  tempDir: string;
  /** How long to wait for every download's response head before measuring anyway. */
  headWaitMs: number;
}

export interface SlowReadersResult {
  downloads: number;
  bytesPerSecond: number;
  /** The same windows, the same server, before the downloads started. */
  unloaded: LoadRun;
  loaded: LoadRun;
  /** 200s per second with the downloads ÷ without. */
  requestsRatio: number;
  p99Ratio: number;
  /** Downloads whose response head had arrived when the loaded measurement started. */
  downloadsStarted: number;
  /** Still receiving when the measurement ended (then cut by the bench): the load was there throughout. */
  downloadsInFlight: number;
  /** Ended before the bench cut them: finished, or cut by the server. */
  downloadsEnded: number;
  /** Mean pace the downloads reached, over the time they were open. */
  downloadMbPerSecond: number;
  peakRssMb: number;
  /** TEMP_DIR without the renderings' folder (their own budget), and that folder. */
  tempPeakMb: number;
  renderingsPeakMb: number;
  /** The server's RENDER_CACHE_MB in MB, from /metrics (0: renderings off). */
  renderingsBudgetMb: number;
  tempSamples: number;
}

/** Starts the throttled downloads; resolves `headsIn` once every one has its response head. */
function startDownloads(server: ServerProcess, ask: SlowReadersAsk, signal: AbortSignal) {
  let heads = 0;
  let allHeads: () => void = () => {};
  const headsIn = new Promise<void>((resolve) => (allHeads = resolve));
  const onHead = () => {
    if (++heads === ask.downloads) allHeads();
  };
  const settled: boolean[] = new Array<boolean>(ask.downloads).fill(false);
  const runs = Array.from({ length: ask.downloads }, (_, i) =>
    fetchExtract(server.baseUrl + ask.yearPath, 'csv', bearer(ask.small.keys[i % ask.small.keys.length] ?? ''), { bytesPerSecond: ask.bytesPerSecond, signal, onHead }).finally(() => (settled[i] = true)),
  );
  return { runs, settled, headsIn, heads: () => heads };
}

const waitAtMost = (p: Promise<void>, ms: number) => Promise.race([p, new Promise<void>((r) => setTimeout(r, ms).unref())]);

/**
 * Issue #11 (a): small windows measured alone, then again while `downloads` one-year CSV
 * downloads are read at `bytesPerSecond` each, on one server. Server RSS and TEMP_DIR are sampled
 * from the first download to the last cut.
 */
export async function runSlowReaders(server: ServerProcess, ask: SlowReadersAsk): Promise<SlowReadersResult> {
  const small = () => loadRun(server, ask.small, ask.small.connections, ask.small.seconds);
  await fire(server, ask.small, Math.max(1, ask.small.seconds / 10), 2);
  const unloaded = await small();
  const controller = new AbortController();
  const rss = sampleRss(server.pid);
  const disk = sampleDirectory(ask.tempDir);
  const started = performance.now();
  const d = startDownloads(server, ask, controller.signal);
  try {
    await waitAtMost(d.headsIn, ask.headWaitMs);
    const downloadsStarted = d.heads();
    const loaded = await small();
    const inFlight = d.settled.filter((s) => !s).length;
    controller.abort();
    const runs = await Promise.all(d.runs);
    const openSeconds = (performance.now() - started) / 1000;
    const disks = disk.stop();
    return {
      downloads: ask.downloads,
      bytesPerSecond: ask.bytesPerSecond,
      unloaded,
      loaded,
      requestsRatio: loaded.goodput / unloaded.goodput,
      p99Ratio: loaded.okP99Ms / unloaded.okP99Ms,
      downloadsStarted,
      downloadsInFlight: inFlight,
      downloadsEnded: ask.downloads - inFlight,
      downloadMbPerSecond: runs.reduce((n, r) => n + r.bytes, 0) / 1e6 / ask.downloads / openSeconds,
      peakRssMb: rss.stop().peakMb,
      tempPeakMb: disks.peakMb,
      renderingsPeakMb: disks.renderingsPeakMb,
      renderingsBudgetMb: ((await readMetric(server.baseUrl, 'fire_api_renderings_budget_bytes')) ?? Number.NaN) / 1e6,
      tempSamples: disks.samples,
    };
  } finally {
    controller.abort();
    rss.stop();
    disk.stop();
  }
}
