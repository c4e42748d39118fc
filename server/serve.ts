import { rm } from 'node:fs/promises';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { shutDown, trackOpenResponses } from './shutdown.ts';

/**
 * Builds the service and listens; returns once it accepts connections. SIGINT or SIGTERM drains
 * open responses for at most SHUTDOWN_GRACE_MS, removes the process's folder in TEMP_DIR, then
 * ends the process.
 */
export async function serve(config: Config): Promise<void> {
  const { app, context } = await buildApp(config);
  const open = trackOpenResponses(app);
  const stop = async () => {
    await shutDown(app, open, config.shutdownGraceMs);
    // The app is closed (its spools, renderings and checks gone): what is left of its folder is
    // empty folders, swept otherwise only by the next start. Tried again while a statement the
    // close interrupted may still remove a file of its own.
    await rm(context.extract.tempDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }).catch(() => undefined);
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  app.log.info({ code: CODE }, CODE === 'compiled' ? 'running the compiled JavaScript (COMPILED_DIR)' : 'running the TypeScript sources through tsx');
  await app.listen({ host: config.host, port: config.port });
  checkIoThreads(config, app.log);
}

/** What this process runs, for the log: the tree `npm run build` compiled, or the sources (bin/fire-api.js chooses). */
const CODE = import.meta.url.endsWith('.js') ? 'compiled' : 'sources';

/**
 * DuckDB statements hold a libuv pool thread each while they run, and file reads need one too:
 * bin/fire-api.js sizes the pool before it starts unless the operator set UV_THREADPOOL_SIZE.
 */
function checkIoThreads(config: Config, log: FastifyBaseLogger): void {
  const ioThreads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const wanted = config.duckdbConnections + 4;
  if (ioThreads >= wanted) return log.info({ ioThreads }, 'I/O thread pool');
  log.warn({ ioThreads, duckdbConnections: config.duckdbConnections }, `UV_THREADPOOL_SIZE ${ioThreads} is below DUCKDB_CONNECTIONS + 4 (${wanted}): busy queries will delay file reads`);
}
