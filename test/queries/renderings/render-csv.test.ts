import { readdirSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { writeCsv } from '../../../queries/renderings/render-csv.ts';
import { FORMATS } from '../../../queries/formats.ts';
import { MIN_INSTANT } from '../../../queries/instant.ts';
import { compileRows } from '../../../queries/sql/compile.ts';
import { compileCopy, CSV_COPY } from '../../../queries/sql/compile-copy.ts';
import { copyInto } from '../../../queries/encode/copy-stream.ts';
import { renderCsv, windowRows, type RenderedText } from '../../helpers/renderings.ts';
import { writeBulkHotspotDays } from '../../helpers/sample-data.ts';
import { openDuck, spec, writeFixtures } from '../sql/compile-fixtures.ts';
import { writeEdgeFile } from '../sql/feature-edges.ts';

// A file's CSV lines rendered once must be, for any window, the bytes the response's COPY writes.
let instance: DuckDBInstance;
let c: DuckDBConnection;
let work: string;
let copies = 0;
beforeAll(async () => {
  ({ instance, c } = await openDuck());
  work = await mkdtemp(path.join(os.tmpdir(), 'render-csv-'));
});
afterAll(async () => {
  instance.closeSync();
  await rm(work, { recursive: true, force: true });
});

/**
 * Bytes as text of one character a byte (latin1): compared as one string, where a Buffer is compared
 * byte by byte (seconds for the edge values' megabytes).
 */
const latin1 = (b: Buffer) => b.toString('latin1');

/** The window's CSV rows as today's whole-window path writes them: DuckDB's COPY into a temp file. */
async function copied(dataDir: string, files: string[], from: bigint | null, to: bigint | null): Promise<{ rows: number; bytes: string }> {
  const q = compileRows({ spec: spec(hotspots, dataDir, {}), files, select: FORMATS.csv.rows, from, to, order: 'sort' });
  const target = path.join(work, `copy-${copies++}.csv`);
  const rows = await copyInto(c, compileCopy(q, CSV_COPY, target, work));
  return { rows, bytes: latin1(await readFile(target)) };
}

const slice = (r: RenderedText, from: bigint | null, to: bigint | null) => {
  const [first, end] = windowRows(r.keys, from, to);
  return { rows: end - first, bytes: latin1(r.text.subarray(r.offsets[first]!, r.offsets[end]!)) };
};

/** A rendering's keys, offsets and lines (as latin1). */
const whole = (r: RenderedText) => ({ keys: r.keys, offsets: r.offsets, text: latin1(r.text) });

const render = async (dataDir: string, file: string) => (await renderCsv(c, spec(hotspots, dataDir, {}), file, { scratch: path.join(work, `scratch-${copies++}`), dir: work, hold: () => true }))!;

describe('CSV lines rendered once: the bytes of the response\'s COPY', () => {
  it('hotspots\' edge values (NaN, ±Inf, -0, huge and tiny doubles, unicode, control characters, nulls), any window', async () => {
    const dataDir = path.join(work, 'edges');
    const file = await writeEdgeFile(c, dataDir, hotspots, 7);
    const rendered = await render(dataDir, file);
    expect(rendered.keys.length).toBeGreaterThan(400);
    expect(slice(rendered, null, null)).toEqual(await copied(dataDir, [file], null, null));
    const keys = [...new Set(rendered.keys)].filter((k) => k >= MIN_INSTANT && k < 253402300800000000n);
    const windows: [bigint, bigint][] = [[keys[0]!, keys.at(-1)!], [keys[1]!, keys[4]!], [keys[2]! + 1n, keys[3]!], [keys[3]!, keys[3]!], [keys[3]!, keys[3]! + 1n]];
    for (const [from, to] of windows) expect(slice(rendered, from, to), `${from} to ${to}`).toEqual(await copied(dataDir, [file], from, to));
  });

  it('quoted fields holding commas, quotes and line breaks stay inside their line', async () => {
    const { dataDir, files } = await writeFixtures();
    let quotedBreaks = 0;
    for (const file of files.hotspots!) {
      const rendered = await render(dataDir, file);
      const whole = await copied(dataDir, [file], null, null);
      if (/"[^"]*\n[^"]*"/.test(whole.bytes.toString())) quotedBreaks++;
      expect(slice(rendered, null, null)).toEqual(whole);
      for (let i = 0; i < rendered.keys.length; i++) {
        const k = rendered.keys[i]!;
        expect(slice(rendered, k, k + 1n)).toEqual(await copied(dataDir, [file], k, k + 1n));
      }
    }
    expect(quotedBreaks).toBeGreaterThan(0);
  });

  it('20,000 hotspots over many chunks: hours of the day as copied, and the scratch copy removed', async () => {
    const dataDir = await writeBulkHotspotDays(1);
    const file = path.join(dataDir, 'hotspots/date=2025-08-01/a.parquet');
    const rendered = await render(dataDir, file);
    expect(rendered.keys.length).toBe(20_000);
    const day = BigInt(Date.parse('2025-08-01T00:00:00Z')) * 1000n;
    for (let h = 0n; h < 24n; h += 5n) {
      const [from, to] = [day + h * 3_600_000_000n, day + (h + 1n) * 3_600_000_000n];
      expect(slice(rendered, from, to)).toEqual(await copied(dataDir, [file], from, to));
    }
    expect((await readdir(work)).filter((f) => f.startsWith('scratch-'))).toEqual([]);
  });

  it('lines cut from the copy however it is read: pieces of 2 to 4,096 bytes give the same keys, offsets and lines', async () => {
    const { dataDir: fixtures, files } = await writeFixtures();
    const edges = path.join(work, 'edges-pieces');
    // The edge values (long lines: 600 kB) in pieces that cut most lines; the fixtures, quoted line breaks in pieces of a few bytes.
    const sources = [{ dataDir: edges, file: await writeEdgeFile(c, edges, hotspots, 7), pieces: [61, 4096] }, ...files.hotspots!.map((file) => ({ dataDir: fixtures, file, pieces: [2, 7, 61] }))];
    for (const { dataDir, file, pieces } of sources) {
      const rendered = await render(dataDir, file);
      expect(slice(rendered, null, null)).toEqual(await copied(dataDir, [file], null, null));
      for (const piece of pieces) {
        const cut = (await renderCsv(c, spec(hotspots, dataDir, {}), file, { scratch: path.join(work, `scratch-${copies++}`), dir: work, hold: () => true, piece }))!;
        expect(whole(cut), `${path.basename(file)}, pieces of ${piece}`).toEqual(whole(rendered));
      }
    }
  });

  it('past the budget while the lines are cut from the copy (both on disk): nothing rendered, both removed', async () => {
    const dataDir = await writeBulkHotspotDays(1);
    const file = path.join(dataDir, 'hotspots/date=2025-08-01/a.parquet');
    const scratch = () => path.join(work, `scratch-${copies++}`);
    // Held at most: the copy and every line cut from it, about twice the copy.
    let most = 0;
    expect(await renderCsv(c, spec(hotspots, dataDir, {}), file, { scratch: scratch(), dir: work, hold: (bytes) => ((most = Math.max(most, bytes)), true), piece: 1 << 16 })).not.toBeNull();
    // Room for the copy alone and a part of its lines: the copy is made, then refused while cut.
    const told: number[] = [];
    const hold = (bytes: number) => (told.push(bytes), bytes <= most * 0.75);
    expect(await renderCsv(c, spec(hotspots, dataDir, {}), file, { scratch: scratch(), dir: work, hold, piece: 1 << 16 })).toBeNull();
    expect(told.at(-1)!).toBeGreaterThan(most * 0.75);
    expect(told.filter((b) => b > most / 2 && b <= most * 0.75).length).toBeGreaterThan(1);
    expect((await readdir(work)).filter((f) => f.startsWith('scratch-'))).toEqual([]);
  });

  it('lines that cannot be written (their folder gone): the copy is closed and removed, nothing left open', async () => {
    const dataDir = await writeBulkHotspotDays(1);
    const file = path.join(dataDir, 'hotspots/date=2025-08-01/a.parquet');
    const fds = () => readdirSync('/proc/self/fd').length;
    const render = () => writeCsv(c, spec(hotspots, dataDir, {}), file, { scratch: path.join(work, `scratch-${copies++}`), dir: work, hold: () => true }, path.join(work, 'gone', 'lines'), 'sort');
    await expect(render()).rejects.toThrow(/ENOENT/);
    const before = fds();
    for (let i = 0; i < 5; i++) await expect(render()).rejects.toThrow(/ENOENT/);
    expect(fds()).toBe(before);
    expect((await readdir(work)).filter((f) => f.startsWith('scratch-'))).toEqual([]);
  });
});
