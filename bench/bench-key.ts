import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { REPO_ROOT } from './options.ts';

const run = promisify(execFile);

/**
 * Issues a one-day key into a throw-away registry with the operator's own command
 * (`fire-api keys issue`), so the bench goes through the same auth path as any client.
 * The key is only ever held in memory and sent as a header; it is never printed.
 */
export async function issueBenchKey(keysFile: string): Promise<string> {
  const args = ['bin/fire-api.js', 'keys', 'issue', '--name', 'bench', '--institution', 'bench/extract.ts', '--purpose', 'extract benchmark', '--email', 'bench@localhost', '--days', '1'];
  const { stdout } = await run(process.execPath, args, { cwd: REPO_ROOT, env: { ...process.env, KEYS_FILE: keysFile } });
  const key = stdout.trim().split('\n').at(-1) ?? '';
  if (!key.startsWith('frk_')) throw new Error('`fire-api keys issue` printed no key');
  return key;
}
