import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { DATASETS } from '../../datasets/index.ts';
import { readChain } from '../../queries/files/chain.ts';
import type { Engine } from '../../queries/engine/engine.ts';
import type { AppContext } from '../app-context.ts';
import { Problem } from '../http/problems.ts';

async function datasetStatus(dataDir: string, name: string, nowMs: number) {
  const dir = path.join(dataDir, name);
  const present = await stat(dir).then((s) => s.isDirectory(), () => false);
  if (!present) return { dataset: name, available: false, reason: 'folder missing', chainAgeSeconds: null };
  const chain = await readChain(dir, nowMs);
  if (!chain.available) return { dataset: name, available: false, reason: chain.reason, chainAgeSeconds: null };
  return { dataset: name, available: true, reason: null, chainAgeSeconds: chain.observation.ageSeconds };
}

/** Each correction layer's models as they are on disk now: how many are published, the default, the files that fail. */
const correctionStates = (ctx: AppContext) =>
  Promise.all(
    DATASETS.filter((d) => d.correction).map(async (d) => {
      const { models, failing } = await ctx.extract.corrections.load(d);
      return { dataset: d.name, published: models.length, latest: models.at(-1)?.id ?? null, failing };
    }),
  );

/**
 * Readiness for a proxy: 503 when this node can serve no data at all (DATA_DIR gone, a lost mount,
 * or every dataset unavailable), so it leaves the rotation. A node still warming its file checks
 * is ready: requests check the files they touch themselves.
 */
async function readiness(ctx: AppContext, engine: Engine) {
  const dataDirReadable = await readdir(ctx.config.dataDir).then(() => true, () => false);
  const nowMs = Date.now();
  const datasets = await Promise.all(
    DATASETS.map(async (d) => {
      const files = ctx.files.summary(d.name);
      return { ...(await datasetStatus(ctx.config.dataDir, d.name, nowMs)), files: files.counts, failingFiles: files.failing };
    }),
  );
  const retry = { 'retry-after': String(ctx.config.retryAfterSeconds) };
  if (!dataDirReadable) throw new Problem('unavailable', 'Not ready: DATA_DIR is missing or unreadable, so no data can be served.', undefined, retry);
  if (!datasets.some((d) => d.available)) {
    const reasons = datasets.map((d) => `${d.dataset}: ${d.reason}`).join('; ');
    throw new Problem('unavailable', `Not ready: no dataset is available (${reasons}).`, undefined, retry);
  }
  return { status: 'ready' as const, engine: { connections: engine.size, busy: engine.busy }, datasets, corrections: await correctionStates(ctx) };
}

/** Operating endpoints: no key, no data. `/healthz` is the process alive; `/readyz` its data servable. */
export function registerOperationRoutes(app: FastifyInstance, ctx: AppContext, engine: Engine, warming: () => boolean): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', () => readiness(ctx, engine));
  app.get('/metrics', async (_request, reply) => {
    for (const d of DATASETS) for (const [state, n] of Object.entries(ctx.files.summary(d.name).counts)) ctx.metrics.setDataFiles(d.name, state, n);
    for (const c of await correctionStates(ctx)) ctx.metrics.setCorrectionModels(c.dataset, { published: c.published, failing: c.failing.length });
    return reply.type('text/plain; version=0.0.4').send(
      await ctx.metrics.render({
        fire_api_duckdb_connections_busy: engine.busy,
        fire_api_duckdb_requests_queued: engine.queued,
        // Groups of streaming extracts waiting for a connection (served after the requests above).
        fire_api_duckdb_groups_queued: engine.queuedBulk,
        // TEMP_DIR bytes reserved by responses written ahead of their clients (at most TEMP_DIR_MAX_MB).
        fire_api_temp_reserved_bytes: ctx.extract.tempBudget.usedBytes,
        // 1 while the start-up file checks run (WARM_FILE_CHECKS), 0 once they are done.
        fire_api_file_checks_warming: warming() ? 1 : 0,
        fire_api_rows_cache_bytes: ctx.extract.rowsCache?.size ?? 0,
        // Groups of aggregate answers kept (at most AGGREGATE_CACHE_MB).
        fire_api_aggregate_cache_bytes: ctx.extract.aggregateCache?.size ?? 0,
        // Disk held by rendered Features (at most RENDER_CACHE_MB), and the files rendered.
        fire_api_renderings_bytes: ctx.extract.renderings?.size ?? 0,
        // RENDER_CACHE_MB in bytes (0: renderings off), for what the folder holds to be read against.
        fire_api_renderings_budget_bytes: ctx.extract.renderings?.maxBytes ?? 0,
        fire_api_renderings_files: ctx.extract.renderings?.files ?? 0,
        // Files waiting to be rendered, the one being rendered included.
        fire_api_renderings_pending: ctx.extract.renderings?.pending ?? 0,
      }, {
        fire_api_rows_cache_hits_total: ctx.extract.rowsCache?.hits ?? 0,
        fire_api_rows_cache_misses_total: ctx.extract.rowsCache?.misses ?? 0,
        fire_api_aggregate_cache_hits_total: ctx.extract.aggregateCache?.hits ?? 0,
        fire_api_aggregate_cache_misses_total: ctx.extract.aggregateCache?.misses ?? 0,
        // One-bucket aggregate windows of many rows cut inside their bucket and merged, those run whole (their shape's groups too many to merge), and cut ones stopped early (a part alone had too many).
        fire_api_aggregate_split_cut_total: ctx.extract.splitMemo.plans().cut,
        fire_api_aggregate_split_whole_total: ctx.extract.splitMemo.plans().whole,
        fire_api_aggregate_split_stopped_total: ctx.extract.splitMemo.plans().stopped,
        // Windows answered from renderings, and those answered the old way (a file not rendered yet).
        fire_api_renderings_hits_total: ctx.extract.renderings?.hits ?? 0,
        fire_api_renderings_misses_total: ctx.extract.renderings?.misses ?? 0,
        fire_api_renderings_failures_total: ctx.extract.renderings?.failures ?? 0,
      }),
    );
  });
}
