import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { parseCorsOrigins, type CorsOrigins } from './http/cors.ts';
import { defaultDuckdbConnections } from './duckdb-connections.cjs';
import { parsePublicUrl } from './http/public-url.ts';
import { COLUMNAR_ROWS_PER_GROUP } from '../queries/sql/compile-columnar.ts';

const Env = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  DATA_DIR: z.string().min(1).default('var/data'),
  TEMP_DIR: z.string().min(1).default('var/tmp'),
  ROW_LIMIT: z.coerce.number().int().positive().default(1_000_000),
  AGGREGATE_ROW_LIMIT: z.coerce.number().int().positive().default(100_000),
  AGGREGATE_SPOOL_ROWS: z.coerce.number().int().min(0).default(20_000),
  AGGREGATE_SPOOL_GROUPS: z.coerce.number().int().positive().default(20_000),
  GROUP_ROWS: z.coerce.number().int().positive().default(100_000),
  PARQUET_ROW_GROUP_ROWS: z.coerce.number().int().positive().default(COLUMNAR_ROWS_PER_GROUP),
  IN_MEMORY_ROWS: z.coerce.number().int().min(0).default(50_000),
  IN_MEMORY_MAX_MB: z.coerce.number().positive().default(4),
  WARM_FILE_CHECKS: z.stringbool().default(true),
  FILE_CHECK_INTERVAL_MS: z.coerce.number().int().min(0).default(2000),
  RESPONSE_CACHE_MB: z.coerce.number().min(0).default(0),
  AGGREGATE_CACHE_MB: z.coerce.number().min(0).default(32),
  RENDER_CACHE_MB: z.coerce.number().min(0).default(4096),
  RENDER_AT_START: z.stringbool().default(true),
  QUERY_TIMEOUT_MS: z.coerce.number().int().positive().default(600_000),
  SEND_IDLE_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  EXTRACT_AHEAD_MB: z.coerce.number().positive().default(64),
  TEMP_DIR_MAX_MB: z.coerce.number().positive().default(2048),
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(30_000),
  RETRY_AFTER_SECONDS: z.coerce.number().int().positive().default(60),
  // One thread per statement, and parallelism from statements running side by side (an extract's
  // groups, concurrent requests): measured faster and in about half the memory of threads = cores.
  DUCKDB_THREADS: z.coerce.number().int().positive().default(1),
  EXTRACT_CONNECTIONS: z.coerce.number().int().positive().default(Math.max(2, os.availableParallelism())),
  DUCKDB_CONNECTIONS: z.coerce.number().int().positive().default(defaultDuckdbConnections()),
  DUCKDB_QUEUE_MAX: z.coerce.number().int().min(0).default(512),
  QUEUE_WAIT_MAX_MS: z.coerce.number().int().positive().default(10_000),
  REFUSAL_HOLD_MS: z.coerce.number().int().min(0).max(60_000).default(2_000),
  DUCKDB_MEMORY_LIMIT: z.string().regex(/^\d+(\.\d+)?\s*[KMGT]i?B$/i, 'like 2GB or 512MiB').default('2GB'),
  KEYS_FILE: z.string().min(1).default('var/keys.json'),
  KEYS_RELOAD_MS: z.coerce.number().int().min(50).max(2000).default(500),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(120),
  RATE_LIMIT_WINDOW_MS: z.coerce.number().int().min(1000).default(60_000),
  AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().positive().default(30),
  REDIS_URL: z.string().url().optional(),
  TRUST_PROXY: z.stringbool().default(false),
  PUBLIC_URL: z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined || text.trim() === '') return null;
      try {
        return parsePublicUrl(text.trim());
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
        return z.NEVER;
      }
    }),
  COMPRESS_RESPONSES: z.stringbool().default(true),
  COMPRESS_WHOLE_MAX_MB: z.coerce.number().min(0).default(64),
  CORS_ORIGINS: z
    .string()
    .default('*')
    .transform((text, ctx) => {
      try {
        return parseCorsOrigins(text);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
        return z.NEVER;
      }
    }),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** Every environment variable the server reads: docs/configuration.md lists each one. */
export const SETTING_NAMES: readonly string[] = Object.keys(Env.shape);

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  tempDir: string;
  rowLimit: number;
  /** Groups one aggregate response holds before it is cut on a bucket boundary. */
  aggregateRowLimit: number;
  /** An aggregate window whose files hold at least this many rows may have its groups spooled to TEMP_DIR (0: never). */
  aggregateSpoolRows: number;
  /** The groups (and rows) a spooled aggregate window is handled in: its first part's rows, the most held, each further part's, the most read back into memory. */
  aggregateSpoolGroups: number;
  /** Rows per ordered query while streaming: bounds DuckDB's sort memory and paces the pipeline. */
  groupRows: number;
  /** Rows per row group of a Parquet response (each group's file is cut into row groups of this many). */
  parquetRowGroupRows: number;
  /** A whole GeoJSON window whose files hold at most this many rows is read into memory by one statement (0: never). */
  inMemoryRows: number;
  /** A window read into memory (or from renderings) of more bytes than this is sent from a temp file (or a piece at a time). */
  inMemoryMaxBytes: number;
  /** Check every data file in the background at start, so first requests find their checks cached. */
  warmFileChecks: boolean;
  /** How often new or changed data files are looked for and checked in the background (0: never). */
  fileCheckIntervalMs: number;
  /** Memory for the rows of recent small responses (0: off). */
  responseCacheBytes: number;
  /** Memory for the groups of aggregate answers, kept when first computed (0: off). */
  aggregateCacheBytes: number;
  /** Disk for files' GeoJSON Features rendered once and served by byte range (0: off). */
  renderCacheBytes: number;
  /** Files the start-up checks find good rendered too, into the room the budget leaves, while no request uses DuckDB. */
  renderAtStart: boolean;
  /** Engine time one request may take (planning, counting, writing groups); a client's download does not count. */
  queryTimeoutMs: number;
  /** A download is cut when its client takes no bytes for this long. */
  sendIdleTimeoutMs: number;
  /** Bytes one streamed response may have written into TEMP_DIR ahead of its client. */
  extractAheadBytes: number;
  /** Bytes all responses together may hold in TEMP_DIR; beyond it a response is refused (503) before its first byte. */
  tempDirMaxBytes: number;
  /** Time for a request (headers and any body) to arrive completely; then 408 and the connection is closed. */
  requestTimeoutMs: number;
  /** On SIGTERM/SIGINT, how long open responses may finish before they are cut. */
  shutdownGraceMs: number;
  retryAfterSeconds: number;
  /** How long a queue-full refusal is held before its 503 is sent (at most the queue's drain time; 0: at once). */
  refusalHoldMs: number;
  duckdbThreads: number;
  duckdbConnections: number;
  /** Connections one extract writes its groups on at once: its own, plus idle ones when there are. */
  extractConnections: number;
  duckdbMemoryLimit: string;
  /** Requests that may wait for a DuckDB connection; beyond it, 503 at once. */
  duckdbQueueMax: number;
  queueWaitMaxMs: number;
  keysFile: string;
  keysReloadMs: number;
  rateLimitPerMinute: number;
  /** The rate-limit window; one minute in the specification, shorter only for tests. */
  rateLimitWindowMs: number;
  authFailuresPerMinute: number;
  redisUrl: string | null;
  /** Behind a reverse proxy, take the client address from X-Forwarded-For (failed-auth limits). */
  trustProxy: boolean;
  /** Every absolute link is built under this base (PUBLIC_URL without its trailing slash); null: from the request's Host. */
  publicUrl: string | null;
  /** CSV, GeoJSON and Arrow bodies in br or gzip when the client's Accept-Encoding asks for one. */
  compressResponses: boolean;
  /** The most bytes of a body of known length compressed whole in memory before it is sent (with its length); a larger one is compressed as it is sent. */
  compressWholeMaxBytes: number;
  /** Origins whose pages may read the API (CORS): `*` or a list; an empty list lets none. */
  corsOrigins: CorsOrigins;
  logLevel: z.infer<typeof Env>['LOG_LEVEL'];
}

export class ConfigError extends Error {}

/** Parses the environment once; the only place that reads process.env for the server. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  // DuckDB may read and write under TEMP_DIR: it must not contain the data or the key registry.
  const tempDir = path.resolve(e.TEMP_DIR) + path.sep;
  for (const [name, value] of [['DATA_DIR', e.DATA_DIR], ['KEYS_FILE', e.KEYS_FILE]] as const) {
    if ((path.resolve(value) + path.sep).startsWith(tempDir)) throw new ConfigError(`invalid configuration:\n  TEMP_DIR must not contain ${name}`);
  }
  return {
    host: e.HOST,
    port: e.PORT,
    dataDir: path.resolve(e.DATA_DIR),
    tempDir: path.resolve(e.TEMP_DIR),
    rowLimit: e.ROW_LIMIT,
    aggregateRowLimit: e.AGGREGATE_ROW_LIMIT,
    aggregateSpoolRows: e.AGGREGATE_SPOOL_ROWS,
    aggregateSpoolGroups: e.AGGREGATE_SPOOL_GROUPS,
    groupRows: e.GROUP_ROWS,
    parquetRowGroupRows: e.PARQUET_ROW_GROUP_ROWS,
    inMemoryRows: e.IN_MEMORY_ROWS,
    inMemoryMaxBytes: Math.floor(e.IN_MEMORY_MAX_MB * 1024 * 1024),
    warmFileChecks: e.WARM_FILE_CHECKS,
    fileCheckIntervalMs: e.FILE_CHECK_INTERVAL_MS,
    responseCacheBytes: Math.floor(e.RESPONSE_CACHE_MB * 1024 * 1024),
    aggregateCacheBytes: Math.floor(e.AGGREGATE_CACHE_MB * 1024 * 1024),
    renderCacheBytes: Math.floor(e.RENDER_CACHE_MB * 1024 * 1024),
    renderAtStart: e.RENDER_AT_START,
    queryTimeoutMs: e.QUERY_TIMEOUT_MS,
    sendIdleTimeoutMs: e.SEND_IDLE_TIMEOUT_MS,
    extractAheadBytes: Math.floor(e.EXTRACT_AHEAD_MB * 1024 * 1024),
    tempDirMaxBytes: Math.floor(e.TEMP_DIR_MAX_MB * 1024 * 1024),
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    retryAfterSeconds: e.RETRY_AFTER_SECONDS,
    refusalHoldMs: e.REFUSAL_HOLD_MS,
    duckdbThreads: e.DUCKDB_THREADS,
    duckdbConnections: e.DUCKDB_CONNECTIONS,
    extractConnections: e.EXTRACT_CONNECTIONS,
    duckdbMemoryLimit: e.DUCKDB_MEMORY_LIMIT,
    duckdbQueueMax: e.DUCKDB_QUEUE_MAX,
    queueWaitMaxMs: e.QUEUE_WAIT_MAX_MS,
    keysFile: path.resolve(e.KEYS_FILE),
    keysReloadMs: e.KEYS_RELOAD_MS,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    rateLimitWindowMs: e.RATE_LIMIT_WINDOW_MS,
    authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE,
    redisUrl: e.REDIS_URL ?? null,
    trustProxy: e.TRUST_PROXY,
    publicUrl: e.PUBLIC_URL,
    compressResponses: e.COMPRESS_RESPONSES,
    compressWholeMaxBytes: Math.floor(e.COMPRESS_WHOLE_MAX_MB * 1024 * 1024),
    corsOrigins: e.CORS_ORIGINS,
    logLevel: e.LOG_LEVEL,
  };
}
