import type { DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import type { DatasetDescriptor } from '../datasets/index.ts';
import type { Observation } from './chain.ts';
import { compileCount, compileCountByFile, compileRows, compileTimeAt, type Compiled, type Format, type QuerySpec } from './compile.ts';
import type { Engine, Lease } from './engine.ts';
import { StreamIncompleteError } from './errors.ts';
import type { FileChecker } from './file-check.ts';
import type { Instant } from './instant.ts';
import type { Partition } from './partitions.ts';
import { resolveSources } from './preflight.ts';
import { encodeChunk } from './encode-chunk.ts';
import type { Window } from './window.ts';

export interface ExtractContext {
  engine: Engine;
  checker: FileChecker;
  dataDir: string;
  rowLimit: number;
  nowMs: number;
  /** Aborted on client disconnect or timeout: interrupts whatever query is running. */
  signal: AbortSignal;
}

export interface ExtractRequest {
  descriptor: DatasetDescriptor;
  window: Window | null;
  format: Format;
  filters: readonly { column: string; value: string }[];
  folderValue: string | undefined;
  params: Readonly<Record<string, string>>;
  /**
   * Asked once the files are known and fingerprinted, before any row is counted: true means the
   * client's copy is current (If-None-Match), so no query runs and prepareExtract returns null.
   */
  isFresh?: (version: { dataVersion: string; folderValue: string | null }) => boolean;
}

export interface Extract {
  observation: Observation;
  dataVersion: string;
  folderValue: string | null;
  returned: number;
  truncated: boolean;
  next: Window | null;
  /** Encoded rows; verifies the promised count at the end and throws if it was not met. */
  chunks(): AsyncGenerator<string>;
  /** Call when the response closes, however it closes: returns or interrupts the connection. Idempotent. */
  dispose(): void;
}

interface Cut {
  returned: number;
  to: Instant | null;
  limit: number | null;
  next: Window | null;
}

async function scalar(c: DuckDBConnection, q: Compiled): Promise<bigint | null> {
  const rows = (await c.runAndReadAll(q.sql, q.params)).getRows();
  const v = rows[0]?.[0];
  return typeof v === 'bigint' ? v : null;
}

async function countByFile(c: DuckDBConnection, spec: QuerySpec, partitions: Partition[], w: Window | null): Promise<Map<string, number>> {
  const files = partitions.flatMap((p) => p.files.map((f) => f.path));
  if (files.length === 0) return new Map();
  const q = compileCountByFile(spec, files, w?.from ?? null, w?.to ?? null);
  const rows = (await c.runAndReadAll(q.sql, q.params)).getRows();
  return new Map(rows.map((r) => [String(r[0]), Number(r[1])]));
}

/** Where the response ends: all rows, or the rows before the first instant that would exceed the limit. */
async function findCut(c: DuckDBConnection, spec: QuerySpec, parts: Partition[], counts: number[], w: Window | null, limit: number): Promise<Cut> {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total <= limit) return { returned: total, to: w?.to ?? null, limit: null, next: null };
  if (!w) return { returned: limit, to: null, limit, next: null };
  let before = 0;
  let i = 0;
  while (before + counts[i]! <= limit) before += counts[i++]!;
  const files = parts[i]!.files.map((f) => f.path);
  const cutAt = await scalar(c, compileTimeAt(spec, files, w.from, w.to, limit - before));
  if (cutAt === null) throw new Error('cut row vanished between count and cut');
  const inside = Number((await scalar(c, compileCount(spec, files, w.from, cutAt))) ?? 0n);
  if (before + inside === 0) return { returned: limit, to: cutAt + 1n, limit, next: null };
  return { returned: before + inside, to: cutAt, limit: null, next: { from: cutAt, to: w.to } };
}

function compileGroups(spec: QuerySpec, req: ExtractRequest, parts: Partition[], counts: number[], cut: Cut): Compiled[] {
  const live = parts.filter((p, i) => counts[i]! > 0 && (cut.to === null || p.start < cut.to));
  const size = req.descriptor.time?.groupSize ?? 1;
  const groups: Compiled[] = [];
  for (let i = 0; i < live.length; i += size) {
    const files = live.slice(i, i + size).flatMap((p) => p.files.map((f) => f.path));
    groups.push(compileRows(spec, files, req.format, req.window?.from ?? null, cut.to, cut.limit));
  }
  return groups;
}

/**
 * Preflight and plan: every check runs and every row is counted before the first byte is sent.
 * Null when `req.isFresh` says the client already holds this version.
 */
export async function prepareExtract(ctx: ExtractContext, req: ExtractRequest): Promise<Extract | null> {
  const lease = await ctx.engine.acquire(ctx.signal);
  let state: 'ready' | 'streaming' | 'done' = 'ready';
  const interrupt = () => {
    if (state !== 'done') lease.connection.interrupt();
  };
  ctx.signal.addEventListener('abort', interrupt);
  const finish = () => {
    state = 'done';
    ctx.signal.removeEventListener('abort', interrupt);
    lease.release();
  };
  try {
    const needsStations = req.format === 'geojson' && req.descriptor.geometry.kind === 'station';
    const sources = await resolveSources(
      { dataDir: ctx.dataDir, checker: ctx.checker, connection: lease.connection, nowMs: ctx.nowMs },
      { descriptor: req.descriptor, window: req.window, folderValue: req.folderValue, needsStations },
    );
    if (req.isFresh?.(sources)) {
      finish();
      return null;
    }
    const spec: QuerySpec = {
      descriptor: req.descriptor,
      dataDir: ctx.dataDir,
      filters: req.filters,
      params: req.params,
      stationFiles: sources.stationFiles?.map((f) => f.path) ?? null,
    };
    const parts = sources.partitions;
    const byFile = await countByFile(lease.connection, spec, parts, req.window);
    const counts = parts.map((p) => p.files.reduce((n, f) => n + (byFile.get(f.path) ?? 0), 0));
    const cut = await findCut(lease.connection, spec, parts, counts, req.window, ctx.rowLimit);
    const groups = compileGroups(spec, req, parts, counts, cut);
    ctx.signal.throwIfAborted();
    return {
      observation: sources.observation,
      dataVersion: sources.dataVersion,
      folderValue: sources.folderValue,
      returned: cut.returned,
      truncated: cut.returned < counts.reduce((a, b) => a + b, 0),
      next: cut.next,
      chunks: () => {
        if (state !== 'ready') throw new Error('extract already consumed');
        state = 'streaming';
        return streamGroups(lease, groups, req.format, cut.returned, finish);
      },
      // A stream in progress is interrupted and returns the connection from its own finally.
      dispose: () => (state === 'ready' ? finish() : interrupt()),
    };
  } catch (e) {
    finish();
    throw e;
  }
}

async function* streamGroups(lease: Lease, groups: Compiled[], format: Format, expected: number, finish: () => void): AsyncGenerator<string> {
  let written = 0;
  try {
    for (const g of groups) {
      const result = await lease.connection.stream(g.sql, g.params);
      for (let chunk: DuckDBDataChunk | null; (chunk = await result.fetchChunk()) && chunk.rowCount > 0; ) {
        const text = encodeChunk(chunk, format, written === 0);
        written += chunk.rowCount;
        yield text;
      }
    }
    // The client library ends a failed stream as if it had finished: only the count tells.
    if (written !== expected) throw new StreamIncompleteError(expected, written);
  } finally {
    if (written !== expected) lease.connection.interrupt();
    finish();
  }
}
