import http from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { issueBenchKey } from './server/bench-key.ts';
import { ensureDataSet } from './server/data.ts';
import { parseBenchArgs } from './lib/options.ts';
import { readCpuSeconds } from './server/rss.ts';
import { freePort, startServer, type ServerProcess } from './server/server-process.ts';

/**
 * HTTP compression: what a researcher on a 10 MB/s link waits for, with and without a content
 * coding, and what the coding costs the server (its CPU seconds, all threads); then one-hour
 * windows read back to back, to show what compression adds to a small response.
 * `npm run bench:compression -- [--scale S --days N --data-dir DIR]` (the bench's data options).
 */

interface Read {
  status: number;
  coding: string;
  wireBytes: number;
  seconds: number;
  complete: boolean;
}

/** One GET read at `bytesPerSecond` (0: as fast as it comes); the body is counted as it crosses the wire, never decoded. */
function pacedGet(url: string, headers: Record<string, string>, bytesPerSecond: number): Promise<Read> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      let wireBytes = 0;
      res.on('data', (chunk: Buffer) => {
        wireBytes += chunk.length;
        if (bytesPerSecond <= 0) return;
        const due = (wireBytes / bytesPerSecond) * 1000 - (performance.now() - started);
        if (due > 5) {
          res.pause();
          setTimeout(() => res.resume(), due);
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, coding: String(res.headers['content-encoding'] ?? 'identity'), wireBytes, seconds: (performance.now() - started) / 1000, complete: res.complete }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

async function measured(server: ServerProcess, url: string, coding: string, bytesPerSecond: number) {
  const cpuBefore = readCpuSeconds(server.pid) ?? 0;
  const read = await pacedGet(url, { ...server.requestHeaders, 'accept-encoding': coding }, bytesPerSecond);
  return { ...read, cpuSeconds: (readCpuSeconds(server.pid) ?? 0) - cpuBefore };
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

async function pacedFigures(server: ServerProcess, label: string, url: string, pace: number): Promise<void> {
  const rows: string[] = [];
  let identitySeconds = 0;
  for (const coding of ['identity', 'gzip', 'br']) {
    const r = await measured(server, url, coding, pace);
    if (!r.complete || r.status !== 200) throw new Error(`${label} ${coding}: status ${r.status}, complete ${r.complete}`);
    if (coding === 'identity') identitySeconds = r.seconds;
    rows.push(`  ${label.padEnd(24)} ${r.coding.padEnd(9)} ${mb(r.wireBytes).padStart(10)} ${`${r.seconds.toFixed(1)} s`.padStart(9)} ${(r.seconds / identitySeconds).toFixed(2).padStart(7)} ${`${r.cpuSeconds.toFixed(1)} s`.padStart(9)}`);
  }
  console.log(rows.join('\n'));
}

async function smallWindows(server: ServerProcess, days: string[]): Promise<void> {
  for (const coding of ['identity', 'gzip', 'br']) {
    const times: number[] = [];
    let wire = 0;
    const cpuBefore = readCpuSeconds(server.pid) ?? 0;
    for (let i = 0; i < 300; i++) {
      const day = days[i % days.length]!;
      const hour = String(i % 24).padStart(2, '0');
      const url = `${server.baseUrl}/api/v1/hotspots?from=${day}T${hour}:00:00Z&to=${day}T${hour}:59:59Z`;
      const r = await pacedGet(url, { ...server.requestHeaders, 'accept-encoding': coding }, 0);
      if (r.status !== 200 || !r.complete) throw new Error(`small window ${coding}: status ${r.status}`);
      times.push(r.seconds * 1000);
      wire += r.wireBytes;
    }
    times.sort((a, b) => a - b);
    const cpu = (readCpuSeconds(server.pid) ?? 0) - cpuBefore;
    console.log(`  1-hour GeoJSON ×300     ${coding.padEnd(9)} p50 ${percentile(times, 0.5).toFixed(1)} ms  p90 ${percentile(times, 0.9).toFixed(1)} ms  mean wire ${(wire / 300 / 1e3).toFixed(0)} kB  server CPU ${cpu.toFixed(1)} s`);
  }
}

async function main(): Promise<void> {
  const o = parseBenchArgs(process.argv.slice(2));
  const data = await ensureDataSet(o, console.log);
  const keysFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-gz-')), 'keys.json');
  const key = await issueBenchKey(keysFile);
  const port = await freePort();
  const env = { DATA_DIR: data.dir, KEYS_FILE: keysFile, PORT: String(port), LOG_LEVEL: 'warn', ROW_LIMIT: '100000000', RATE_LIMIT_PER_MINUTE: '100000' };
  const server = await startServer(env, { authorization: `Bearer ${key}` });
  try {
    const end = new Date(`${o.end}T00:00:00Z`).getTime();
    const day = (offset: number) => new Date(end + offset * 86_400_000).toISOString().slice(0, 10);
    const year = `${server.baseUrl}/api/v1/hotspots?from=${day(-o.days)}&to=${o.end}&format=csv`;
    // The 30 days from the middle of the data (high summer in the demo year, as month-geojson's July).
    const monthDays = Math.min(o.days, 30);
    const monthStart = -Math.max(monthDays, Math.floor(o.days / 2));
    const month = `${server.baseUrl}/api/v1/hotspots?from=${day(monthStart)}&to=${day(monthStart + monthDays)}`;
    // Warm the page cache and the file checks: every figure then starts from the same state.
    await pacedGet(year, server.requestHeaders, 0);
    const pace = 10e6;
    console.log(`machine: ${os.availableParallelism()} cores, ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, load ${os.loadavg()[0]!.toFixed(1)}`);
    console.log(`data: ${data.dir} (scale ${o.scale}, ${o.days} days); readers paced at ${mb(pace)}/s; server CPU = all its threads during the request`);
    console.log(`  ${'response'.padEnd(24)} ${'coding'.padEnd(9)} ${'on wire'.padStart(10)} ${'last byte'.padStart(9)} ${'÷ ident'.padStart(7)} ${'srv CPU'.padStart(9)}`);
    await pacedFigures(server, `${o.days}-day CSV`, year, pace);
    // Loopback, unpaced: the coding's own speed is then the limit, and its CPU competes with DuckDB's.
    await pacedFigures(server, `${o.days}-day CSV, unpaced`, year, 0);
    await pacedFigures(server, `${monthDays}-day GeoJSON`, month, pace);
    await smallWindows(server, [day(-1), day(-2), day(-3)]);
  } finally {
    await server.stop();
  }
}

await main();
