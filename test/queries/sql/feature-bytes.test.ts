import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS, type DatasetDescriptor } from '../../../datasets/index.ts';
import { FORMATS } from '../../../queries/formats.ts';
import { compileRows, type RowSelect } from '../../../queries/sql/compile.ts';
import { compileCopy } from '../../../queries/sql/compile-copy.ts';
import { copyInto } from '../../../queries/encode/copy-stream.ts';
import { writeEncodedRows } from '../../../queries/extract/row-stream.ts';
import { openDuck, spec, writeFixtures } from './compile-fixtures.ts';
import { EDGE_ROWS, STATIONS, writeEdgeFile } from './feature-edges.ts';
import { referenceFeatureRows } from './feature-reference.ts';

let instance: DuckDBInstance;
let c: DuckDBConnection;
let work: string;
beforeAll(async () => {
  ({ instance, c } = await openDuck());
  work = await mkdtemp(path.join(os.tmpdir(), 'feature-bytes-'));
});
afterAll(async () => {
  instance.closeSync();
  await rm(work, { recursive: true, force: true });
});

const geojson = FORMATS.geojson;
const body = geojson.body.kind === 'text' ? geojson.body : null;

let written = 0;
/** The group file a response would send for `files`, written the way the server writes it: COPY, or JavaScript for WKB rows. */
async function groupBytes(d: DatasetDescriptor, dataDir: string, files: string[], stationFiles: string[], select: RowSelect): Promise<{ bytes: Buffer; rows: number }> {
  const q = compileRows({ spec: spec(d, dataDir, { params: { series: 'corrected' }, stationFiles }), files, select, from: null, to: null });
  const target = path.join(work, `group-${written++}.csv`);
  const rows = geojson.native(d) ? await copyInto(c, compileCopy(q, body!.copy, target, work)) : await writeEncodedRows(c, q, body!.encode!, target);
  const bytes = await readFile(target);
  // Every row reached the file, and the file is a valid list of Features once its first separator is dropped.
  expect(JSON.parse(`[${bytes.subarray(body!.separator.length).toString('utf8')}]`)).toHaveLength(rows);
  return { bytes, rows };
}

/** The first Feature where two outputs part, for a readable failure. */
function firstDifference(actual: Buffer, expected: Buffer): string | null {
  if (actual.equals(expected)) return null;
  // A Feature's opening cannot occur inside a JSON string, where every quote is escaped.
  const features = (b: Buffer) => b.toString('utf8').split(/(?=\{"type":"Feature")/);
  const [a, e] = [features(actual), features(expected)];
  const i = a.findIndex((line, k) => line !== e[k]);
  return `feature ${i} of ${e.length}:\n  got      ${a[i]?.slice(0, 2000)}\n  expected ${e[i]?.slice(0, 2000)}`;
}

describe("GeoJSON Features: the product's bytes equal v1's reference encoder", () => {
  it('the text body is what both are compared through', () => {
    expect(body).not.toBeNull();
  });

  it.each(DATASETS.map((d) => [d.name, d] as const))('%s: edge values (NaN, ±Inf, -0, huge and tiny doubles, unicode, control characters, nulls)', async (_name, d) => {
    const dataDir = path.join(work, `edges-${d.name}`);
    const stations = [await writeEdgeFile(c, dataDir, DATASETS.find((x) => x.name === 'sensor-stations')!, 11)];
    const files = d.name === 'sensor-stations' ? stations : [await writeEdgeFile(c, dataDir, d, 7)];
    const expected = await groupBytes(d, dataDir, files, stations, referenceFeatureRows);
    const actual = await groupBytes(d, dataDir, files, stations, geojson.rows);
    expect(expected.rows).toBe(d.name === 'sensor-stations' ? STATIONS : EDGE_ROWS);
    expect(firstDifference(actual.bytes, expected.bytes)).toBeNull();
  });

  it.each(DATASETS.map((d) => [d.name, d] as const))('%s: the everyday fixtures', async (_name, d) => {
    const { dataDir, files } = await writeFixtures();
    const stations = files['sensor-stations']!;
    const expected = await groupBytes(d, dataDir, files[d.name]!, stations, referenceFeatureRows);
    const actual = await groupBytes(d, dataDir, files[d.name]!, stations, geojson.rows);
    expect(expected.rows).toBeGreaterThan(1);
    expect(firstDifference(actual.bytes, expected.bytes)).toBeNull();
  });
});
