import path from 'node:path';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { DATASETS } from '../datasets/index.ts';
import { BackgroundChecks } from '../queries/background-checks.ts';
import { Engine } from '../queries/engine.ts';
import { FileChecker } from '../queries/file-check.ts';
import { FileStates } from '../queries/file-states.ts';
import { RowsCache } from '../queries/rows-cache.ts';
import { extractTempDir } from '../queries/temp-files.ts';
import type { AppContext } from './app-context.ts';
import { authenticate } from './auth.ts';
import { KeyRegistry } from './keys/key-registry.ts';
import { registerRateLimits } from './rate-limit.ts';
import type { Config } from './config.ts';
import { Metrics } from './metrics.ts';
import { Problem, sendProblem } from './problems.ts';
import { registerDatasetRoute } from './routes/dataset.ts';
import { registerDocsRoute } from './routes/docs.ts';
import { registerOperationRoutes } from './routes/operations.ts';

export interface App {
  app: FastifyInstance;
  engine: Engine;
  context: AppContext;
}

/** Never log a query string or a credential: only method, path and request id. */
const loggerOptions = (config: Config, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] => ({
  level: config.logLevel,
  ...(stream ? { stream } : {}),
  redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
  serializers: {
    req: (req: { method: string; url: string; id: string }) => ({ method: req.method, path: req.url.split('?')[0], id: req.id }),
  },
});

function installErrorHandling(app: FastifyInstance, metrics: Metrics): void {
  app.setErrorHandler((error, request, reply) => {
    if (error instanceof Problem) {
      if (error.kind === 'unavailable') request.log.warn({ err: error.cause ?? error }, 'data unavailable');
      return sendProblem(request, reply, error);
    }
    // Fastify's own client errors (malformed URL, bad body, ...) keep their 4xx meaning.
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    if (status >= 400 && status < 500) return sendProblem(request, reply, new Problem('invalid-parameter', 'The request is malformed.'));
    request.log.error({ err: error }, 'request failed');
    return sendProblem(request, reply, new Problem('internal', 'An internal error occurred; quote the requestId when reporting it.'));
  });
  app.setNotFoundHandler((request, reply) => sendProblem(request, reply, new Problem('not-found', 'No such resource.')));
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.countResponse(route, reply.statusCode);
    metrics.observeDuration(route, reply.statusCode, reply.elapsedTime / 1000);
  });
}

function startBackgroundChecks(app: FastifyInstance, ctx: AppContext): BackgroundChecks {
  const checks = new BackgroundChecks({
    dataDir: ctx.config.dataDir,
    // Its own DuckDB spill folder, inside this server's temp folder (swept with it if the server dies).
    tempDir: path.join(ctx.extract.tempDir, 'warm-checks'),
    checker: ctx.extract.checker,
    states: ctx.files,
    warm: ctx.config.warmFileChecks,
    intervalMs: ctx.config.fileCheckIntervalMs,
    events: {
      skipped: (s) => app.log.warn(s, 'partition folder name is not a valid partition key; its files are never served'),
      checked: (r) => app.log.info({ files: r.files, ms: r.ms }, r.warm ? 'data file checks warmed' : 'new or changed data files checked'),
      failed: (e) => app.log.warn({ err: e }, 'data file check process failed; its files are tried again next round'),
    },
  });
  checks.start();
  return checks;
}

export async function buildApp(config: Config, opts: { logStream?: NodeJS.WritableStream } = {}): Promise<App> {
  const engine = await Engine.create({
    dataDir: config.dataDir,
    tempDir: config.tempDir,
    threads: config.duckdbThreads,
    connections: config.duckdbConnections,
    memoryLimit: config.duckdbMemoryLimit,
    maxQueued: config.duckdbQueueMax,
  });
  const app = Fastify({
    logger: loggerOptions(config, opts.logStream),
    return503OnClosing: true,
    trustProxy: config.trustProxy,
    // A malformed URL is the client's error: answer with a problem, not Fastify's own body.
    frameworkErrors: (_error, request, reply) => sendProblem(request, reply, new Problem('invalid-parameter', 'The request URL or headers are malformed.')),
  });
  const keys = new KeyRegistry(config.keysFile, app.log);
  await keys.load();
  keys.watch(config.keysReloadMs);
  const metrics = new Metrics();
  const files = new FileStates(config.dataDir, (p) => app.log.warn(p, 'data file fails its check; windows touching it answer 503'));
  const context: AppContext = {
    config,
    metrics,
    files,
    extract: {
      engine,
      checker: new FileChecker(config.dataDir, (d, f, verdict) => files.record(d, f, verdict)),
      dataDir: config.dataDir,
      tempDir: await extractTempDir(config.tempDir),
      rowLimit: config.rowLimit,
      groupRows: config.groupRows,
      connectionsPerExtract: config.extractConnections,
      // Responses up to 4 MB (a busy hour of GeoJSON is about 3 MB), at most an eighth of the cache each.
      rowsCache: config.responseCacheBytes > 0 ? new RowsCache(config.responseCacheBytes, Math.min(4 * 1024 * 1024, config.responseCacheBytes / 8)) : null,
    },
  };
  installErrorHandling(app, metrics);
  // Data routes: key, then per-key rate limit, then the handler.
  await app.register(async (scope) => {
    const limits = await registerRateLimits(scope, config, metrics);
    scope.addHook('onRequest', authenticate(keys, limits.failureGate, metrics));
    scope.addHook('onClose', async () => limits.close());
    for (const d of DATASETS) registerDatasetRoute(scope, context, d);
  });
  const checks = config.warmFileChecks || config.fileCheckIntervalMs > 0 ? startBackgroundChecks(app, context) : null;
  registerOperationRoutes(app, context, engine, () => checks?.warming() ?? false);
  registerDocsRoute(app, context);
  app.addHook('onClose', async () => {
    keys.stop();
    await checks?.stop();
    engine.close();
  });
  return { app, engine, context };
}
