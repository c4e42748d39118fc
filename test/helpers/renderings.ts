import type { DuckDBConnection } from '@duckdb/node-api';
import { readFile, rm, stat } from 'node:fs/promises';
import { request } from 'node:http';
import path from 'node:path';
import { afterEach, expect } from 'vitest';
import { hotspots } from '../../datasets/hotspots.ts';
import { Engine } from '../../queries/engine/engine.ts';
import { writeCsv, type CsvScratch } from '../../queries/renderings/render-csv.ts';
import { Renderings } from '../../queries/renderings/renderings.ts';
import { lowerBound, writeFeatures, type RenderedRows } from '../../queries/renderings/render-file.ts';
import type { DataFile } from '../../queries/files/data-file.ts';
import { hashFooter } from '../../queries/files/footer.ts';
import type { QuerySpec } from '../../queries/sql/compile.ts';
import { writeBulkHotspots, type BulkPad } from './parquet.ts';
import { writeBulkHotspotDays, writeSampleData } from './sample-data.ts';
import { startServer, type TestServer } from './server.ts';
import { until } from './until.ts';

/** What the renderings' own tests render: days of hotspots, an engine over them, each day file as listed with its footer hash. */
export interface RenderingDays {
  dataDir: string;
  engine: Engine;
  spec: QuerySpec;
  files: DataFile[];
  hashes: Map<string, string>;
}

/** `days` days of 20,000 hotspots from 2025-08-01 (writeBulkHotspotDays), an engine of one thread and two connections over them. */
export async function renderingDays(days: number): Promise<RenderingDays> {
  const dataDir = await writeBulkHotspotDays(days);
  const engine = await Engine.create({ dataDir, tempDir: path.join(dataDir, 'tmp'), threads: 1, connections: 2, memoryLimit: '256MB', maxQueued: 10 });
  const spec: QuerySpec = { descriptor: hotspots, dataDir, filters: [], params: {}, stationFiles: null };
  const files: DataFile[] = [];
  const hashes = new Map<string, string>();
  for (let d = 1; d <= days; d++) {
    const p = path.join(dataDir, `hotspots/date=2025-08-${String(d).padStart(2, '0')}/a.parquet`);
    const s = await stat(p);
    const f: DataFile = { path: p, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
    files.push(f);
    hashes.set(p, await hashFooter(f));
  }
  return { dataDir, engine, spec, files, hashes };
}

/** A counter or gauge of the server's /metrics (NaN when absent). */
export const metric = async (s: TestServer, name: string): Promise<number> => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(`${s.url}/metrics`)).text())?.[1]);

/**
 * Asks `query` until it is answered from renderings (its files rendered in the background after a
 * first, old-way answer): that answer. After an old-way answer, asks again once no file waits to be
 * rendered (an answer asked meanwhile would only hold the renderings back: they wait for DuckDB to be idle).
 */
export async function answerFromRenderings<T>(s: TestServer, query: string, answer: (s: TestServer, query: string) => Promise<T>): Promise<T> {
  let hit: { answer: T } | null = null;
  const served = await until(async () => {
    const hits = await metric(s, 'fire_api_renderings_hits_total');
    const a = await answer(s, query);
    if ((await metric(s, 'fire_api_renderings_hits_total')) > hits) hit = { answer: a };
    else await until(() => s.context.extract.renderings!.pending === 0);
    return hit !== null;
  });
  expect(served, query).toBe(true);
  return hit!.answer;
}

/**
 * The body as a reader that stops after its first bytes until `meanwhile` is done, then reads on:
 * what it got (as sent on the wire: coded, when `headers` ask for a coding), its coding, and whether
 * the response ended whole. On a connection of its own: one kept alive from a fast read would have
 * grown its receive buffer (up to tcp_rmem's 32 MB here) and take most of the body meanwhile; a fresh
 * one holds about 4.5 MB (its socket buffers and the pieces read ahead of it).
 */
export function pausedRead(s: TestServer, query: string, meanwhile: () => Promise<void>, headers: Record<string, string> = {}): Promise<{ status: number; length: number; encoding: string | undefined; bytes: number; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(`${s.url}${query}`, { headers: { ...s.auth, ...headers }, agent: false }, (res) => {
      let bytes = 0;
      let paused = false;
      const end = () => resolve({ status: res.statusCode!, length: Number(res.headers['content-length']), encoding: res.headers['content-encoding'], bytes, complete: res.complete });
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (paused) return;
        paused = true;
        res.pause();
        meanwhile().then(() => res.resume(), reject);
      });
      res.on('end', end);
      res.on('error', end);
      res.on('aborted', () => undefined);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A file's rendering read back into memory: its text, and each row's key and offsets into it. */
export type RenderedText = Omit<RenderedRows, 'bytes'> & { text: Buffer };

/** Rows [first, end) of the window [from, to) (null: open) of a rendering's keys. */
export function windowRows(keys: BigInt64Array, from: bigint | null, to: bigint | null): [number, number] {
  const first = from === null ? 0 : lowerBound(keys, from);
  const end = to === null ? keys.length : lowerBound(keys, to);
  return [first, Math.max(first, end)];
}

/** The file's Features as a rendering writes them (in DuckDB's sort), read back from `target`. */
export async function renderFeatures(c: DuckDBConnection, spec: QuerySpec, file: string, target: string): Promise<RenderedText> {
  const rows = (await writeFeatures(c, spec, file, target, () => true, 'sort'))!;
  return { keys: rows.keys, offsets: rows.offsets, text: await readFile(target) };
}

/** The file's CSV lines as a rendering writes them (in DuckDB's sort), read back (`s.scratch` with `.text` after it holds them meanwhile); null past the budget. */
export async function renderCsv(c: DuckDBConnection, spec: QuerySpec, file: string, s: CsvScratch): Promise<RenderedText | null> {
  const target = `${s.scratch}.text`;
  try {
    const rows = await writeCsv(c, spec, file, s, target, 'sort');
    return rows && { keys: rows.keys, offsets: rows.offsets, text: await readFile(target) };
  } finally {
    await rm(target, { force: true });
  }
}

/** A server that renders nothing and one that renders, over the sample data and two days of bulk hotspots (2025-08-05 and 06). */
export interface PlainAndRendered {
  plain: TestServer;
  rendered: TestServer;
  /** The rendering server's renderings folder. */
  renderings: string;
}

/** Two days of `rows` bulk hotspots each (writeBulkHotspots' `perInstant`, `stepSeconds`, `pad`), served both ways with `env` (and RENDER_CACHE_MB `renderMb` for the one that renders). */
export async function plainAndRendered(rows: number, perInstant: number, stepSeconds: number, renderMb: number, env: Record<string, string> = {}, pad: BulkPad = {}): Promise<PlainAndRendered> {
  const dir = await writeSampleData();
  for (const day of ['2025-08-05', '2025-08-06']) await writeBulkHotspots(path.join(dir, `hotspots/date=${day}/a.parquet`), day, rows, perInstant, stepSeconds, 'ordered', day, pad);
  const plain = await startServer(dir, env);
  const rendered = await startServer(dir, { ...env, RENDER_CACHE_MB: String(renderMb) });
  return { plain, rendered, renderings: rendered.context.extract.renderings!.dir };
}

/**
 * Renderings stores of one test each: `made(dir, maxBytes)` as `new Renderings`, every one closed after
 * the test (its queue stopped, its files' handles closed), not left for the garbage collector.
 */
export function renderingsPerTest(): (dir: string, maxBytes: number) => Renderings {
  const open: Renderings[] = [];
  afterEach(() => {
    for (const r of open.splice(0)) r.close();
  });
  return (dir, maxBytes) => {
    const r = new Renderings(dir, maxBytes);
    open.push(r);
    return r;
  };
}
