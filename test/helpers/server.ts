import type { AddressInfo } from 'node:net';
import { buildApp, type App } from '../../server/app.ts';
import { loadConfig } from '../../server/config.ts';

export interface TestServer extends App {
  url: string;
  close(): Promise<void>;
}

/** A real app on a real port, over `dataDir`; env overrides go through the same config parser as production. */
export async function startServer(dataDir: string, env: Record<string, string> = {}, opts: { logStream?: NodeJS.WritableStream } = {}): Promise<TestServer> {
  const config = loadConfig({ DATA_DIR: dataDir, TEMP_DIR: `${dataDir}/.tmp`, LOG_LEVEL: 'silent', DUCKDB_THREADS: '2', PORT: '0', ...env });
  const built = await buildApp(config, opts);
  await built.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = built.app.server.address() as AddressInfo;
  return { ...built, url: `http://127.0.0.1:${port}`, close: () => built.app.close() };
}
