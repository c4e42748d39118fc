import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../lib/options.ts';
import { runPool } from '../lib/pool.ts';

const run = promisify(execFile);

/** Concurrent `keys issue` runs: the registry is written under its own lock, and each run is mostly node start-up. */
const ISSUE_CONCURRENCY = 4;

/**
 * Issues a one-day key into a throw-away registry with the operator's own command
 * (`fire-api keys issue`), so the bench goes through the same auth path as any client.
 * The key is only ever held in memory and sent as a header; it is never printed.
 */
export async function issueBenchKey(keysFile: string, name = 'bench'): Promise<string> {
  const args = ['bin/fire-api.js', 'keys', 'issue', '--name', name, '--institution', 'bench/extract.ts', '--purpose', 'extract benchmark', '--email', 'bench@localhost', '--days', '1'];
  const { stdout } = await run(process.execPath, args, { cwd: REPO_ROOT, env: { ...process.env, KEYS_FILE: keysFile } });
  const key = stdout.trim().split('\n').at(-1) ?? '';
  if (!key.startsWith('frk_')) throw new Error('`fire-api keys issue` printed no key');
  return key;
}

/**
 * `count` keys in one registry: small-windows spreads its connections over them so the per-key rate
 * limit sees many clients, as in production, rather than one key doing everything.
 */
export function issueBenchKeys(keysFile: string, count: number): Promise<string[]> {
  return runPool(count, ISSUE_CONCURRENCY, (i) => issueBenchKey(keysFile, `bench ${i + 1}`));
}
