import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { issueBenchKey } from './server/bench-key.ts';
import { ensureDataSet } from './server/data.ts';
import { parseBenchArgs } from './lib/options.ts';
import { randomInt, randomLogUniform, seededRandom } from './lib/random.ts';
import { readStatusMb, sampleRss } from './server/rss.ts';
import { waitForMetricAtMost, waitForQuiet } from './server/server-metrics.ts';
import { freePort, startServer, type ServerProcess } from './server/server-process.ts';

/**
 * Memory while clients hang up in bursts: bursts of connections over every dataset, format, coding
 * and route (data, OGC items, aggregates), windows of an hour to a month, each client gone before
 * any byte, right after the headers, or 256 B to 2 MB into the body. Prints the server's RSS idle,
 * at its peak (sampled, and the kernel's VmHWM) and once it is quiet again, beside the idle level
 * and the 300 MB target. The data is the demo set `npm start` writes unless told otherwise.
 * `npm run bench:hangups -- [--requests N] [--burst N] [--seed N] [--scale S --days N --end DAY --data-dir DIR]`
 */

const TARGET_MB = 300;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const SPANS_MS = [HOUR_MS, 6 * HOUR_MS, DAY_MS, 7 * DAY_MS, 30 * DAY_MS];
const ACCEPT: Record<string, string> = { parquet: 'application/vnd.apache.parquet', arrow: 'application/vnd.apache.arrow.stream' };
const CODINGS = ['identity', 'br, gzip', 'gzip'];

interface HangUp {
  path: string;
  headers: Record<string, string>;
  /** Gone after `ms` with no answer yet, gone at the headers, or gone after `bytes` of body. */
  at: { ms: number } | 'headers' | { bytes: number };
}

/** `--requests`, `--burst` and `--seed`, taken out of the arguments; the rest are the bench's data options (demo defaults). */
function ownArgs(argv: string[]): { rest: string[]; requests: number; burst: number; seed: number } {
  const own = { requests: 400, burst: 80, seed: 1 };
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]!.replace(/^--/, '');
    if (!(name in own)) {
      rest.push(argv[i]!);
      continue;
    }
    const value = Number(argv[++i]);
    if (!Number.isInteger(value) || value < (name === 'seed' ? 0 : 1)) throw new Error(`--${name} takes a whole number${name === 'seed' ? '' : ' above 0'}`);
    own[name as keyof typeof own] = value;
  }
  for (const [flag, value] of [['--scale', '1'], ['--days', '30']]) if (!rest.includes(flag!)) rest.push(flag!, value!);
  return { rest, ...own };
}

function drawHangUps(count: number, seed: number, fromMs: number, days: number): HangUp[] {
  const random = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[randomInt(random, 0, xs.length)]!;
  const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
  const window = (spanMs: number) => {
    const span = Math.min(spanMs, days * DAY_MS);
    const start = fromMs + randomInt(random, 0, Math.max(1, (days * DAY_MS - span) / HOUR_MS)) * HOUR_MS;
    return `from=${iso(start)}&to=${iso(start + span)}`;
  };
  return Array.from({ length: count }, () => {
    const kind = pick(['hotspots', 'hotspots', 'sensor-readings', 'sensor-readings', 'fire-danger', 'burnt-areas', 'ogc', 'aggregate']);
    const headers: Record<string, string> = {};
    let path: string;
    if (kind === 'ogc') path = `/api/v1/ogc/collections/${pick(['hotspots', 'sensor-readings'])}/items?limit=${pick([100, 1000, 10000])}`;
    else if (kind === 'aggregate') {
      const d = pick(['hotspots', 'sensor-readings']);
      path = `/api/v1/${d}/aggregate?${window(30 * DAY_MS)}&interval=${pick(['hour', 'day'])}&${d === 'hotspots' ? 'groupBy=country&stats=frp.sum' : 'groupBy=stationId'}&format=${pick(['csv', 'geojson'])}`;
    } else {
      const format = pick(['csv', 'csv', 'geojson', 'geojson', 'parquet', 'arrow']);
      path = `/api/v1/${kind}?${window(pick(SPANS_MS))}${format === 'csv' || format === 'geojson' ? `&format=${format}` : ''}`;
      if (ACCEPT[format]) headers.accept = ACCEPT[format];
    }
    const coding = pick(CODINGS);
    if (coding !== 'identity') headers['accept-encoding'] = coding;
    const r = random();
    const at = r < 0.2 ? { ms: randomInt(random, 0, 30) } : r < 0.4 ? ('headers' as const) : { bytes: Math.round(randomLogUniform(random, 256, 2 * 1024 * 1024)) };
    return { path, headers, at };
  });
}

/** One client that hangs up as drawn; resolves with what happened (never rejects: a refused or cut request is an outcome too). */
function hangUp(server: ServerProcess, h: HangUp): Promise<string> {
  return new Promise((resolve) => {
    let outcome: string | null = null;
    const done = (o: string) => outcome ?? resolve((outcome = o));
    const gone = typeof h.at === 'object' && 'ms' in h.at ? setTimeout(() => (request.destroy(), done('gone before the answer')), h.at.ms) : undefined;
    const request = http.get(`${server.baseUrl}${h.path}`, { headers: { ...server.requestHeaders, ...h.headers }, agent: false }, (response) => {
      // The answer came first: this client stays for the whole body.
      clearTimeout(gone);
      if (h.at === 'headers') return request.destroy(), done(`${response.statusCode} at headers`);
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (typeof h.at === 'object' && 'bytes' in h.at && bytes >= h.at.bytes) request.destroy(), done(`${response.statusCode} mid-body`);
      });
      response.on('end', () => done(`${response.statusCode} whole`));
      response.on('close', () => done(`${response.statusCode} closed`));
      response.on('error', () => undefined);
    });
    request.on('error', () => done('no answer'));
    request.setTimeout(60_000, () => request.destroy());
  });
}

/** RSS once no DuckDB connection is busy and nothing waits to be rendered, a second later; a server that never got quiet is no figure. */
async function quietRssMb(server: ServerProcess): Promise<number> {
  const busy = await waitForMetricAtMost(server.baseUrl, 'fire_api_duckdb_connections_busy', 0, 60_000);
  const rendering = await waitForMetricAtMost(server.baseUrl, 'fire_api_renderings_pending', 0, 300_000, 250);
  if (busy.value !== 0 || rendering.value !== 0) throw new Error(`the server did not get quiet (busy connections ${busy.value}, renderings pending ${rendering.value})`);
  await new Promise((r) => setTimeout(r, 1000));
  return readStatusMb(server.pid, 'VmRSS') ?? Number.NaN;
}

/** Resets the kernel's RSS high-water mark (VmHWM), so it counts from the bursts on, not from start-up; false when not allowed. */
function resetHighWaterMark(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  const own = ownArgs(process.argv.slice(2));
  const o = parseBenchArgs(own.rest);
  const data = await ensureDataSet(o, console.log);
  const keysFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-hangups-')), 'keys.json');
  const key = await issueBenchKey(keysFile);
  const env = { DATA_DIR: data.dir, KEYS_FILE: keysFile, PORT: String(await freePort()), LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000', RENDER_AT_START: 'false' };
  const server = await startServer(env, { authorization: `Bearer ${key}` });
  try {
    await waitForQuiet(server.baseUrl, 500, 120_000);
    const idleMb = await quietRssMb(server);
    const fromMs = Date.parse(`${o.end}T00:00:00Z`) - o.days * DAY_MS;
    const hangUps = drawHangUps(own.requests, own.seed, fromMs, o.days);
    const hwmReset = resetHighWaterMark(server.pid);
    const sampler = sampleRss(server.pid, 50);
    const outcomes: Record<string, number> = {};
    const started = performance.now();
    for (let i = 0; i < hangUps.length; i += own.burst) {
      for (const outcome of await Promise.all(hangUps.slice(i, i + own.burst).map((h) => hangUp(server, h)))) outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
    const seconds = (performance.now() - started) / 1000;
    const afterMb = await quietRssMb(server);
    const { peakMb } = sampler.stop();
    const hwmMb = readStatusMb(server.pid, 'VmHWM') ?? Number.NaN;
    server.assertAlive();
    console.log(`machine: ${os.availableParallelism()} cores, ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, load ${os.loadavg()[0]!.toFixed(1)}`);
    console.log(`data: ${data.dir} (scale ${o.scale}, ${o.days} days); ${hangUps.length} clients in bursts of ${own.burst}, seed ${own.seed}, ${seconds.toFixed(1)} s`);
    console.log(`outcomes: ${Object.entries(outcomes).sort().map(([k, n]) => `${k} ${n}`).join(', ')}`);
    const fig = (mb: number) => `${mb.toFixed(0)} MB`;
    // VmHWM catches a peak between two samples; it counts from start-up when it could not be reset.
    const peak = hwmReset ? Math.max(peakMb, hwmMb) : peakMb;
    console.log(`RSS idle ${fig(idleMb)}, peak ${fig(peakMb)} (VmHWM ${fig(hwmMb)}${hwmReset ? '' : ', since start-up: not reset'}), quiet again ${fig(afterMb)}`);
    console.log(`peak ÷ idle ${(peak / idleMb).toFixed(2)}; after ÷ idle ${(afterMb / idleMb).toFixed(2)}; target peak ≤ ${TARGET_MB} MB: ${peak <= TARGET_MB ? 'met' : 'short'}`);
  } finally {
    await server.stop();
  }
}

await main();
