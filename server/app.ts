import path from 'node:path';
import type { Socket } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { DATASETS } from '../datasets/index.ts';
import { CorrectionStore } from '../queries/files/corrections.ts';
import { Extents } from '../queries/files/extent.ts';
import { FolderListings } from '../queries/files/folder-listings.ts';
import { BackgroundChecks } from '../queries/files/background-checks.ts';
import { Engine } from '../queries/engine/engine.ts';
import { EngineBusyError, isOutOfTempSpace } from '../queries/errors.ts';
import { FileChecker } from '../queries/files/check.ts';
import { FileStates } from '../queries/files/states.ts';
import { Renderings } from '../queries/renderings/renderings.ts';
import { renderSeen } from '../queries/renderings/rendered.ts';
import { RowsCache } from '../queries/engine/rows-cache.ts';
import { TempBudget } from '../queries/engine/temp-budget.ts';
import { extractTempDir, renderingsDir } from '../queries/engine/temp-files.ts';
import { readStatusesFor } from '../queries/files/status.ts';
import type { AppContext } from './app-context.ts';
import { authenticate } from './access/auth.ts';
import { answerClientError, answerConnect, ignoreUnknownExpectations } from './http/client-errors.ts';
import { registerCors } from './http/cors.ts';
import { KeyRegistry } from './keys/key-registry.ts';
import { registerRateLimits } from './access/rate-limit.ts';
import type { Config } from './config.ts';
import { Metrics } from './metrics.ts';
import { registerTargetRule } from './http/public-url.ts';
import { heldRefusal, Problem, sendProblem } from './http/problems.ts';
import { registerAggregateRoute } from './routes/aggregate.ts';
import { registerCorrectionsRoute } from './routes/corrections.ts';
import { registerDatasetRoute } from './routes/dataset.ts';
import { registerDocsRoute } from './routes/docs.ts';
import { registerExploreRoute } from './routes/explore.ts';
import { registerOgcAssets, registerOgcRoutes } from './routes/ogc.ts';
import { registerOperationRoutes } from './routes/operations.ts';
import { SplitMemo } from '../queries/aggregate/aggregate-split-memo.ts';

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
    // An absolute-form target (refused) may carry a user name and password: only a path is logged.
    req: (req: { method: string; url: string; id: string }) => ({ method: req.method, path: req.url.startsWith('/') ? req.url.split('?')[0] : '(not a path)', id: req.id }),
  },
});

/** Node notices an expired request only when it checks its connections: check often enough that the 408 leaves within `ms`. */
function requestTimeouts(ms: number) {
  const checkMs = Math.min(1000, Math.max(50, Math.floor(ms / 10)));
  const timeout = ms - checkMs;
  // Node answers an HTTP/1.1 request without Host with an empty 400 of its own: registerTargetRule answers it with a problem instead.
  return { requestTimeout: timeout, http: { requestTimeout: timeout, headersTimeout: timeout, connectionsCheckingInterval: checkMs, requireHostHeader: false } };
}

/**
 * close() closes the connections idle at the moment it is called; a response that ends after that
 * leaves its keep-alive connection open until the client's keep-alive runs out, and close() waits
 * for it. A response with a length lets its client have the whole body a moment before the
 * response itself ends, so this is the common case for a client that closes right after reading.
 * A proxy may also send its next request on such a connection before it is closed: that request
 * is answered (a refusal would reach the proxy's client, as the proxy retries only on errors)
 * and says `Connection: close`, as does every answer while the server closes.
 */
function closeIdleWhileClosing(app: FastifyInstance): void {
  let closing = false;
  // A connection that has not sent a byte has no request to drain, yet Node counts it neither idle
  // nor expired: close() would wait for its client (an HTTP client's spare connection) for good.
  const opened = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    opened.add(socket);
    socket.once('close', () => opened.delete(socket));
  });
  app.addHook('preClose', async () => {
    closing = true;
    // After this turn's reads: a request already waiting in the kernel's buffer is read, and served.
    setImmediate(() => {
      for (const socket of opened) if (socket.bytesRead === 0) socket.destroy();
    });
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  app.addHook('onResponse', async () => {
    if (closing) setImmediate(() => app.server.closeIdleConnections());
  });
}

function installErrorHandling(app: FastifyInstance, metrics: Metrics, config: Config): void {
  app.setErrorHandler((error, request, reply) => {
    // The client left while the request was prepared: its doing, not the data's or the server's (the answer goes nowhere).
    const clientGone = request.raw.socket?.destroyed === true;
    if (clientGone) request.log.info(request.raw.complete ? 'client closed the connection before the response' : 'connection closed before the request arrived completely (client gone or REQUEST_TIMEOUT_MS)');
    if (error instanceof Problem) {
      if (error.kind === 'unavailable' && isOutOfTempSpace(error.cause)) {
        metrics.countTempSpaceExhausted();
        request.log.error({ err: error.cause }, 'TEMP_DIR is full: responses that need temporary files fail');
      } else if (error.cause instanceof EngineBusyError) {
        // At capacity is the load, not the data: counted in /metrics, and no stack per refusal when thousands a second are refused.
        request.log.debug('at capacity');
        return heldRefusal(error.cause, config.refusalHoldMs, config.retryAfterSeconds).then((held) => sendProblem(request, reply, held));
      } else if (error.kind === 'unavailable' && !clientGone) request.log.warn({ err: error.cause ?? error }, 'data unavailable');
      return sendProblem(request, reply, error);
    }
    // No route takes a body: whatever a body's size or type, a method other than GET or HEAD is the 404 it always was.
    if (request.is404) return sendProblem(request, reply, new Problem('not-found', 'No such resource.'));
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    if (status >= 400 && status < 500) return sendProblem(request, reply, new Problem('malformed-request', 'The request is malformed.'));
    metrics.countInternalError();
    request.log.error({ err: error }, 'request failed');
    return sendProblem(request, reply, new Problem('internal', 'An internal error occurred; quote the requestId when reporting it.'));
  });
  app.setNotFoundHandler((request, reply) => sendProblem(request, reply, new Problem('not-found', 'No such resource.')));
  app.addHook('onRequest', async (request, reply) => {
    reply.raw.once('close', () => {
      if (reply.raw.headersSent && !reply.raw.writableFinished) request.log.info({ status: reply.statusCode }, 'connection closed during the response (client gone or transfer cut)');
    });
  });
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
      seen: (s) => (!s.atStart || ctx.config.renderAtStart) && renderSeen(ctx.extract, s.dataset, s.file, s.verdict, s.atStart ? 'stock' : 'seen'),
    },
  });
  checks.start();
  return checks;
}

export async function buildApp(config: Config, opts: { logStream?: NodeJS.WritableStream } = {}): Promise<App> {
  const app = Fastify({
    logger: loggerOptions(config, opts.logStream),
    // Requests on connections still open while the server drains are answered (see closeIdleWhileClosing).
    return503OnClosing: false,
    trustProxy: config.trustProxy,
    // A malformed URL is the client's error: answer with a problem, not Fastify's own body.
    frameworkErrors: (_error, request, reply) => sendProblem(request, reply, new Problem('malformed-request', 'The request URL or headers are malformed.')),
    // Fastify's default is no limit: a client announcing a body it never sends held its connection forever.
    ...requestTimeouts(config.requestTimeoutMs),
    clientErrorHandler: answerClientError,
  });
  // The registry before the engine: one that does not load leaves no DuckDB behind.
  const keys = new KeyRegistry(config.keysFile, app.log);
  await keys.load();
  const { dataDir, tempDir, duckdbThreads: threads, duckdbConnections: connections, duckdbMemoryLimit: memoryLimit, duckdbQueueMax: maxQueued, queueWaitMaxMs: maxQueueWaitMs } = config;
  const engine = await Engine.create({ dataDir, tempDir, threads, connections, memoryLimit, maxQueued, maxQueueWaitMs });
  return assembleApp(app, config, engine, keys).catch((e: unknown) => {
    engine.close();
    throw e;
  });
}

async function assembleApp(app: FastifyInstance, config: Config, engine: Engine, keys: KeyRegistry): Promise<App> {
  // Looked at once: a folder missing or unreadable is reported where it is used, as before.
  const remote = await readStatusesFor(config.dataDir).catch(() => null);
  if (remote) app.log.info({ fileSystem: remote }, 'DATA_DIR is on a network or user-space file system: file statuses are read through the thread pool, never inline');
  const metrics = new Metrics();
  const files = new FileStates(config.dataDir, (p) => app.log.warn(p, 'data file fails its check; windows touching it answer 503'));
  const tempDir = await extractTempDir(config.tempDir);
  const context: AppContext = {
    config,
    metrics,
    files,
    extents: new Extents(config.dataDir, engine),
    extract: {
      engine,
      checker: new FileChecker(config.dataDir, (d, f, verdict) => files.record(d, f, verdict)),
      dataDir: config.dataDir,
      tempDir,
      rowLimit: config.rowLimit,
      groupRows: config.groupRows,
      parquetRowGroupRows: config.parquetRowGroupRows,
      inMemoryRows: config.inMemoryRows,
      inMemoryMaxBytes: config.inMemoryMaxBytes,
      aggregateSpoolRows: config.aggregateSpoolRows,
      aggregateSpoolGroups: config.aggregateSpoolGroups,
      // Each shape's groups a row, for the plan of its next one-bucket window: this server's own.
      splitMemo: new SplitMemo(),
      listings: new FolderListings(),
      corrections: new CorrectionStore(config.dataDir),
      connectionsPerExtract: config.extractConnections,
      tempBudget: new TempBudget(config.tempDirMaxBytes, config.retryAfterSeconds),
      aheadBytes: config.extractAheadBytes,
      // Responses up to 4 MB (a busy hour of GeoJSON is about 3 MB), at most an eighth of the cache each.
      rowsCache: config.responseCacheBytes > 0 ? new RowsCache(config.responseCacheBytes, Math.min(4 * 1024 * 1024, config.responseCacheBytes / 8)) : null,
      // An answer up to a quarter of the budget (8 MB of 32; a grid cell with its polygon is about 165 bytes).
      aggregateCache: config.aggregateCacheBytes > 0 ? new RowsCache(config.aggregateCacheBytes, config.aggregateCacheBytes / 4) : null,
      // A folder of this app's own in this process's TEMP_DIR folder, removed when it stops: no rendering outlives its index.
      renderings: config.renderCacheBytes > 0 ? new Renderings(await renderingsDir(tempDir), config.renderCacheBytes) : null,
    },
  };
  installErrorHandling(app, metrics, config);
  registerTargetRule(app);
  answerConnect(app);
  ignoreUnknownExpectations(app);
  closeIdleWhileClosing(app);
  registerCors(app, config.corsOrigins);
  // Data routes: key, then per-key rate limit, then the handler.
  await app.register(async (scope) => {
    const limits = await registerRateLimits(scope, config, metrics);
    scope.addHook('onRequest', authenticate(keys, limits.failureGate, metrics));
    scope.addHook('onClose', async () => limits.close());
    for (const d of DATASETS) registerDatasetRoute(scope, context, d);
    for (const d of DATASETS) if (d.aggregate) registerAggregateRoute(scope, context, d);
    for (const d of DATASETS) if (d.correction) registerCorrectionsRoute(scope, context, d);
    registerOgcRoutes(scope, context);
  });
  const checks = config.warmFileChecks || config.fileCheckIntervalMs > 0 ? startBackgroundChecks(app, context) : null;
  registerOperationRoutes(app, context, engine, () => checks?.warming() ?? false);
  registerDocsRoute(app, context);
  registerOgcAssets(app);
  registerExploreRoute(app, context);
  keys.watch(config.keysReloadMs);
  // As the server starts to stop: a window waiting for a rendering is answered the old way while DuckDB is still open.
  app.addHook('preClose', async () => context.extract.renderings?.close());
  app.addHook('onClose', async () => {
    keys.stop();
    await checks?.stop();
    engine.close();
    await context.extract.renderings?.remove();
  });
  return { app, engine, context };
}
