import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS, type DatasetDescriptor } from '../../../datasets/index.ts';
import { FORMATS } from '../../../queries/formats.ts';
import { compileRows, type Compiled } from '../../../queries/sql/compile.ts';
import { ARROW_BATCH_ROWS, arrowSchema, arrowSchemaMessage, ARROW_END_OF_STREAM, writeArrowRows } from '../../../queries/encode/arrow-ipc.ts';
import { writeBulkHotspotDays } from '../../helpers/sample-data.ts';
import { openDuck, spec, writeFixtures } from '../sql/compile-fixtures.ts';
import { EDGE_ROWS, STATIONS, writeEdgeFile } from '../sql/feature-edges.ts';
import { referenceArrowBatches } from './arrow-reference.ts';

let instance: DuckDBInstance;
let c: DuckDBConnection;
let work: string;
beforeAll(async () => {
  ({ instance, c } = await openDuck());
  work = await mkdtemp(path.join(os.tmpdir(), 'arrow-bytes-'));
});
afterAll(async () => {
  instance.closeSync();
  await rm(work, { recursive: true, force: true });
});

const byName = (name: string) => DATASETS.find((d) => d.name === name)!;
const HOTSPOTS = byName('hotspots');

/** The select a response sends for `files`, as the server compiles it. */
const select = (d: DatasetDescriptor, dataDir: string, files: string[], stationFiles: string[]): Compiled =>
  compileRows({ spec: spec(d, dataDir, { params: { series: 'corrected' }, stationFiles }), files, select: FORMATS.arrow.rows, from: null, to: null });

/** Where two group files part, by batch, column and buffer, for a readable failure. */
function firstDifference(d: DatasetDescriptor, actual: Buffer, expected: Buffer): string | null {
  if (actual.equals(expected)) return null;
  const [a, e] = [readBack(d, actual), readBack(d, expected)];
  const bytes = (x: ArrayBufferView | undefined | null) => (x ? Buffer.from(x.buffer, x.byteOffset, x.byteLength) : Buffer.alloc(0));
  for (const [b, batch] of e.batches.entries()) {
    for (const [k, field] of e.schema.fields.entries()) {
      const [x, y] = [a.batches[b]!.data.children[k]!, batch.data.children[k]!];
      for (const buffer of ['values', 'valueOffsets', 'nullBitmap'] as const) {
        const [p, q] = [bytes(x[buffer]), bytes(y[buffer])];
        const at = p.findIndex((v, i) => v !== q[i]);
        if (at >= 0 || p.length !== q.length) return `batch ${b}, ${field.name} ${buffer}: byte ${at} of ${q.length} (${p.length}): ${p.subarray(at, at + 8).toString('hex')} != ${q.subarray(at, at + 8).toString('hex')}`;
      }
    }
  }
  return `byte ${actual.findIndex((v, i) => v !== expected[i])} of ${expected.length} (${actual.length})`;
}

let written = 0;
/** The product's group file next to the reference's batches for the same select, and its rows. */
async function both(d: DatasetDescriptor, q: Compiled): Promise<{ actual: Buffer; expected: Buffer; rows: number }> {
  const target = path.join(work, `group-${written++}.arrows`);
  const rows = await writeArrowRows(c, q, target, d);
  return { actual: await readFile(target), expected: await referenceArrowBatches(c, q, d), rows };
}

/** The rows an independent reader (apache-arrow) finds in a group file made a whole stream. */
const readBack = (d: DatasetDescriptor, group: Buffer) => tableFromIPC(Buffer.concat([arrowSchemaMessage(arrowSchema(d)), group, ARROW_END_OF_STREAM]));

describe("Arrow batches copied from DuckDB's vectors equal the batches built value by value", () => {
  it.each(DATASETS.map((d) => [d.name, d] as const))('%s: edge values (NaN, ±Inf, -0, huge and tiny doubles, unicode, control characters, nulls)', async (_name, d) => {
    const dataDir = path.join(work, `edges-${d.name}`);
    const stations = [await writeEdgeFile(c, dataDir, byName('sensor-stations'), 11)];
    const files = d.name === 'sensor-stations' ? stations : [await writeEdgeFile(c, dataDir, d, 7)];
    const { actual, expected, rows } = await both(d, select(d, dataDir, files, stations));
    expect(rows).toBe(d.name === 'sensor-stations' ? STATIONS : EDGE_ROWS);
    expect(readBack(d, actual).numRows).toBe(rows);
    expect(firstDifference(d, actual, expected)).toBeNull();
  });

  it.each(DATASETS.map((d) => [d.name, d] as const))('%s: the everyday fixtures', async (_name, d) => {
    const { dataDir, files } = await writeFixtures();
    const { actual, expected, rows } = await both(d, select(d, dataDir, files[d.name]!, files['sensor-stations']!));
    expect(rows).toBeGreaterThan(1);
    expect(actual.equals(expected)).toBe(true);
  });

  it('several batches, chunks of odd sizes split across batches at rows that are not a multiple of 8', { timeout: 60_000 }, async () => {
    const dataDir = await writeBulkHotspotDays(4);
    const dir = path.join(dataDir, 'hotspots');
    const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.parquet')).map((f) => path.join(dir, f));
    const q = select(HOTSPOTS, dataDir, files, []);
    // Dropping a third of the ordered rows leaves DuckDB's chunks short by uneven counts.
    const uneven = { sql: `SELECT * FROM (${q.sql}) AS t WHERE hash("id") % 3 <> 0`, params: q.params };
    for (const query of [q, uneven]) {
      const { actual, expected, rows } = await both(HOTSPOTS, query);
      expect(rows).toBeGreaterThan(2 * ARROW_BATCH_ROWS);
      const table = readBack(HOTSPOTS, actual);
      expect(table.numRows).toBe(rows);
      expect(table.batches.map((b) => b.numRows).slice(0, -1)).toEqual(Array(table.batches.length - 1).fill(ARROW_BATCH_ROWS));
      // The bulk days hold nulls (MODIS and VIIRS columns), else this would not test validity.
      expect(table.getChild('brightness')!.nullCount).toBeGreaterThan(0);
      expect(actual.equals(expected)).toBe(true);
    }
  });

  it('a select whose column types are not the schema\'s is refused, not copied as the wrong bytes', async () => {
    const dataDir = path.join(work, 'types');
    const files = [await writeEdgeFile(c, dataDir, HOTSPOTS, 3)];
    const q = select(HOTSPOTS, dataDir, files, []);
    const wrong = { sql: `SELECT * REPLACE (CAST("type" AS BIGINT) AS "type") FROM (${q.sql}) AS t`, params: q.params };
    await expect(writeArrowRows(c, wrong, path.join(work, 'wrong.arrows'), HOTSPOTS)).rejects.toThrow(/DuckDB type/);
  });
});
