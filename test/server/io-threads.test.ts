import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startServer, type ServerProcess } from '../../bench/server/server-process.ts';
import { writeSampleData } from '../helpers/sample-data.ts';

let dataDir: string;
beforeAll(async () => {
  dataDir = await writeSampleData();
});
const started: ServerProcess[] = [];
afterAll(async () => {
  for (const s of started) await s.stop();
});

async function serve(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const base = { DATA_DIR: dataDir, TEMP_DIR: `${dataDir}/.tmp-${port}`, KEYS_FILE: `${dataDir}/keys-${port}.json`, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', WARM_FILE_CHECKS: 'false' };
  const { UV_THREADPOOL_SIZE: _pool, DUCKDB_CONNECTIONS: _connections, ...parent } = process.env;
  const s = await startServer({ ...base, ...env }, {}, [], parent);
  started.push(s);
  return s;
}

/** Waits until the startup log line about the pool is in the child's output. */
async function poolLine(s: ServerProcess): Promise<Record<string, unknown>> {
  for (let i = 0; i < 50; i++) {
    const line = s.outputTail().split('\n').find((l) => l.includes('"ioThreads"'));
    if (line) return JSON.parse(line) as Record<string, unknown>;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no ioThreads line in\n${s.outputTail()}`);
}

describe('the I/O thread pool of a server started with fire-api', () => {
  it('is set to the DuckDB connections + 8 (at least 16) when the operator did not set it', async () => {
    expect(await poolLine(await serve({ DUCKDB_CONNECTIONS: '12' }))).toMatchObject({ level: 30, ioThreads: 20 });
    expect(await poolLine(await serve({ DUCKDB_CONNECTIONS: '2' }))).toMatchObject({ level: 30, ioThreads: 16 });
    // The default connection count (2 × cores) is what the pool is sized for when none is set.
    expect(await poolLine(await serve({}))).toMatchObject({ level: 30, ioThreads: Math.max(16, Math.max(2, os.availableParallelism() * 2) + 8) });
  });

  it('keeps an operator-set UV_THREADPOOL_SIZE, and warns when it is too small', async () => {
    const line = await poolLine(await serve({ DUCKDB_CONNECTIONS: '8', UV_THREADPOOL_SIZE: '4' }));
    expect(line).toMatchObject({ level: 40, ioThreads: 4, duckdbConnections: 8 });
    expect(String(line.msg)).toMatch(/below DUCKDB_CONNECTIONS \+ 4 \(12\)/);
  });
});
