import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/server/server-process.ts';
import { issueKey } from '../../server/keys/key-admin.ts';
import { ROOT } from '../helpers/bench-run.ts';
import { writeSampleData } from '../helpers/sample-data.ts';
import { waitFor } from '../helpers/http.ts';
import { TEST_HOLDER } from '../helpers/server.ts';

/** Running: a process that has exited but not been reaped yet (a zombie, state Z) has ended. */
const isAlive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

const leftovers: number[] = [];
afterAll(() => leftovers.filter(isAlive).forEach((pid) => process.kill(pid, 'SIGKILL')));

// A bench stopped by its operator (Ctrl-C, or SIGTERM from a job runner) must not leave its server
// child running: it would hold a port, memory and DuckDB threads, and skew the next run's figures.
describe('a stopped bench takes its server with it', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} to the bench ends the server child too`, { timeout: 90_000 }, async () => {
      const dataDir = await writeSampleData();
      const keysFile = path.join(dataDir, '..', `keys-${signal}.json`);
      await issueKey(keysFile, TEST_HOLDER, 1);
      const bench = spawn(process.execPath, ['--import', 'tsx', 'test/bench/fixtures/hold-server.ts', String(await freePort())], {
        cwd: ROOT,
        env: { ...process.env, DATA_DIR: dataDir, KEYS_FILE: keysFile },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      bench.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
      expect(await waitFor(() => /server (\d+)/.test(out), 60_000), out).toBe(true);
      const pid = Number(/server (\d+)/.exec(out)![1]);
      leftovers.push(pid);
      expect(isAlive(pid)).toBe(true);
      const exited = once(bench, 'exit');
      bench.kill(signal);
      await exited;
      expect(await waitFor(() => !isAlive(pid), 30_000)).toBe(true);
    });
  }
});
