import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { renderCsv, windowRows, type RenderedText } from '../../../queries/engine/render-file.ts';
import { FORMATS } from '../../../queries/formats.ts';
import { MIN_INSTANT } from '../../../queries/instant.ts';
import { compileRows } from '../../../queries/sql/compile.ts';
import { compileCopy, CSV_COPY } from '../../../queries/sql/compile-copy.ts';
import { copyInto } from '../../../queries/stream/copy-stream.ts';
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

/** The window's CSV rows as today's whole-window path writes them: DuckDB's COPY into a temp file. */
async function copied(dataDir: string, files: string[], from: bigint | null, to: bigint | null): Promise<{ rows: number; bytes: Buffer }> {
  const q = compileRows({ spec: spec(hotspots, dataDir, {}), files, select: FORMATS.csv.rows, from, to, order: 'sort' });
  const target = path.join(work, `copy-${copies++}.csv`);
  const rows = await copyInto(c, compileCopy(q, CSV_COPY, target, work));
  return { rows, bytes: await readFile(target) };
}

const slice = (r: RenderedText, from: bigint | null, to: bigint | null) => {
  const [first, end] = windowRows(r.keys, from, to);
  return { rows: end - first, bytes: r.text.subarray(r.offsets[first]!, r.offsets[end]!) };
};

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
});
