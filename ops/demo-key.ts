import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { issueKey, keyState } from '../server/keys/key-admin.ts';
import { keyIdOf } from '../server/keys/key-format.ts';
import { readRegistry } from '../server/keys/registry-file.ts';

/**
 * The key `npm start` prints. Its secret is kept in a 0600 file beside KEYS_FILE so a restart
 * prints the same key; it is reused only while the registry still holds it as active.
 */
export async function demoKey(keysFile: string): Promise<{ key: string; issued: boolean }> {
  const file = path.join(path.dirname(keysFile), 'demo-key.txt');
  const saved = (await readFile(file, 'utf8').catch(() => '')).trim();
  const id = keyIdOf(saved);
  const record = id === null ? undefined : (await readRegistry(keysFile)).keys.find((k) => k.id === id);
  if (record && keyState(record) === 'active') return { key: saved, issued: false };
  const holder = { name: 'Demo user', institution: 'local demo', purpose: 'trying the service on demo data', email: 'demo@localhost' };
  const { key } = await issueKey(keysFile, holder, 365);
  await writeFile(file, key + '\n', { mode: 0o600 });
  return { key, issued: true };
}
