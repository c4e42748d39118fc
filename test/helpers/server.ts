import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach } from 'vitest';
import { buildApp, type App } from '../../server/app.ts';
import { loadConfig } from '../../server/config.ts';
import { issueKey } from '../../server/keys/key-admin.ts';
import { checkConformance } from '../openapi/conformance-hook.ts';
import { tempDir } from './fixtures.ts';

export interface TestServer extends App {
  url: string;
  /** A valid key issued for this server, and its header. */
  key: string;
  keysFile: string;
  auth: { authorization: string };
  /** fetch with the key: `get('/api/v1/hotspots?...')`. */
  get(pathAndQuery: string, init?: RequestInit): Promise<Response>;
  /** What did not match the served document so far (close() throws when there is any). */
  violations: readonly string[];
  close(): Promise<void>;
}

export const TEST_HOLDER = { name: 'Test Researcher', institution: 'Test University', purpose: 'automated tests', email: 'test@example.org' };

/** A real app on a real port, over `dataDir`; env overrides go through the same config parser as production. */
export async function startServer(dataDir: string, env: Record<string, string> = {}, opts: { logStream?: NodeJS.WritableStream } = {}): Promise<TestServer> {
  const keysFile = env.KEYS_FILE ?? path.join(await tempDir('fire-api-keys-'), 'keys.json');
  const { key } = await issueKey(keysFile, TEST_HOLDER, 30);
  // Tests about other things must not trip the per-key limit; the rate-limit tests set it explicitly.
  // Nor render in the background (on by default): the renderings tests set RENDER_CACHE_MB.
  const config = loadConfig({ DATA_DIR: dataDir, TEMP_DIR: `${dataDir}/.tmp`, LOG_LEVEL: 'silent', DUCKDB_THREADS: '2', PORT: '0', KEYS_FILE: keysFile, RATE_LIMIT_PER_MINUTE: '100000', WARM_FILE_CHECKS: 'false', FILE_CHECK_INTERVAL_MS: '0', RENDER_CACHE_MB: '0', ...env });
  const built = await buildApp(config, opts);
  // Every response of every test is checked against the served OpenAPI document; close() reports what did not match.
  const conformance = await checkConformance(built.app);
  await built.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = built.app.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${key}` };
  const get = (pathAndQuery: string, init: RequestInit = {}) => fetch(`${url}${pathAndQuery}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } });
  const close = async () => {
    await built.app.close();
    conformance.assertClean();
  };
  return { ...built, url, key, keysFile, auth, get, close, violations: conformance.violations };
}

/**
 * Servers of one test each: `start(dataDir, env)` as startServer, every server a test started closed
 * after it (a server the test closed itself is not closed again).
 */
export function serverPerTest(): (dataDir: string, env?: Record<string, string>) => Promise<TestServer> {
  const open = new Set<TestServer>();
  afterEach(async () => {
    for (const s of [...open]) await s.close();
  });
  return async (dataDir, env = {}) => {
    const s = await startServer(dataDir, env);
    const server: TestServer = {
      ...s,
      close: async () => {
        if (open.delete(server)) await s.close();
      },
    };
    open.add(server);
    return server;
  };
}
