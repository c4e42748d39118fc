// Background file checks: how soon new files dropped beside a running server are checked, and what
// the checks cost the server's memory, beside checking the same files in the server's own process.
// Run: node --import tsx bench/background-checks.ts [--files 50] [--rounds 3] [--scale 20]
import { copyFile, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { hotspots } from '../datasets/hotspots.ts';
import { Engine } from '../queries/engine/engine.ts';
import { FileChecker } from '../queries/files/check.ts';
import { listDatasetFiles } from '../queries/files/partitions.ts';
import { writeDemoData } from '../demo/write-demo-data.ts';
import { issueBenchKey } from './server/bench-key.ts';
import { freePort, startServer, type ServerProcess } from './server/server-process.ts';

const { values } = parseArgs({ options: { files: { type: 'string', default: '50' }, rounds: { type: 'string', default: '3' }, scale: { type: 'string', default: '20' } } });
const files = Number(values.files);
const rounds = Number(values.rounds);
const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;

async function sample(server: ServerProcess, name: string): Promise<number> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.slice(name.length + 1));
}

async function waitFor(server: ServerProcess, name: string, target: number, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while ((await sample(server, name)) !== target) {
    if (performance.now() - started > timeoutMs) throw new Error(`${name} did not reach ${target} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return performance.now() - started;
}

/** `files` new files, each a copy of a partition's file beside it, renamed into place as operators should. */
async function drop(dataDir: string, round: number): Promise<void> {
  const partitions = (await readdir(path.join(dataDir, 'hotspots'))).filter((n) => n.startsWith('date=')).sort().slice(0, files);
  for (const p of partitions) {
    const dir = path.join(dataDir, 'hotspots', p);
    await copyFile(path.join(dir, 'demo.parquet'), path.join(dir, `.late-${round}.parquet`));
    await rename(path.join(dir, `.late-${round}.parquet`), path.join(dir, `late-${round}.parquet`));
  }
}

/** The same checks in this process, on a connection of an engine configured like the server's. */
async function inProcess(dataDir: string, tempDir: string): Promise<{ before: number; after: number }> {
  const engine = await Engine.create({ dataDir, tempDir, threads: 1, connections: 2, memoryLimit: '2GB', maxQueued: 64 });
  const listed = (await listDatasetFiles(dataDir, hotspots)).files.filter((f) => path.basename(f.path) === 'late-1.parquet');
  const before = process.memoryUsage().rss;
  const lease = await engine.acquire();
  const checker = new FileChecker(dataDir);
  for (const f of listed) await checker.check(lease.connection, hotspots, f);
  lease.release();
  await new Promise((r) => setTimeout(r, 2000));
  const after = process.memoryUsage().rss;
  engine.close();
  return { before, after };
}

const root = await mkdtemp(path.join(os.tmpdir(), 'fire-api-bench-checks-'));
try {
  const dataDir = path.join(root, 'data');
  await writeDemoData({ outDir: dataDir, end: '2026-01-01', days: files + 10, seed: 1, scale: Number(values.scale) }, () => undefined);
  const keysFile = path.join(root, 'keys.json');
  const key = await issueBenchKey(keysFile);
  const env = { DATA_DIR: dataDir, TEMP_DIR: path.join(root, 'tmp'), KEYS_FILE: keysFile, PORT: String(await freePort()), LOG_LEVEL: 'warn' };
  const server = await startServer(env, { authorization: `Bearer ${key}` });
  try {
    await waitFor(server, 'fire_api_file_checks_warming', 0, 120_000);
    const ok = 'fire_api_data_files{dataset="hotspots",state="ok"}';
    let expected = await sample(server, ok);
    console.log(`server warmed: ${expected} hotspot files ok, RSS ${mb(await sample(server, 'process_resident_memory_bytes'))}`);
    for (let round = 1; round <= rounds; round++) {
      await drop(dataDir, round);
      expected += files;
      const ms = await waitFor(server, ok, expected, 60_000);
      await new Promise((r) => setTimeout(r, 2000));
      console.log(`round ${round}: ${files} new files checked ${(ms / 1000).toFixed(1)} s after the last was dropped; server RSS ${mb(await sample(server, 'process_resident_memory_bytes'))}`);
    }
  } finally {
    await server.stop();
  }
  const own = await inProcess(dataDir, path.join(root, 'tmp-own'));
  console.log(`the same ${files} files checked in this process instead: RSS ${mb(own.before)} -> ${mb(own.after)}`);
  console.log(`machine: ${os.availableParallelism()} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
} finally {
  await rm(root, { recursive: true, force: true });
}
