import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { writeFeatures } from '../../../queries/renderings/render-file.ts';
import { indexable, readFilterIndex, type FilterIndex } from '../../../queries/renderings/render-filter.ts';
import { gathered, locate, rangePieces, type RenderWindow } from '../../../queries/renderings/rendered-window.ts';
import { RenderHandles } from '../../../queries/renderings/render-handles.ts';
import { STRIDE, writeRecords, type RenderedEntry } from '../../../queries/renderings/render-records.ts';
import { runStaged } from '../../../queries/extract/staged-run.ts';
import { FORMATS } from '../../../queries/formats.ts';
import { compileRows } from '../../../queries/sql/compile.ts';
import { compileCopy, CSV_COPY } from '../../../queries/sql/compile-copy.ts';
import { compileStaged } from '../../../queries/sql/compile-staged.ts';
import type { RowFilter } from '../../../queries/sql/filter-sql.ts';
import { copyInto } from '../../../queries/encode/copy-stream.ts';
import { featureBytes } from '../../../queries/extract/in-memory.ts';
import { renderCsv, type RenderedText } from '../../helpers/renderings.ts';
import { openDuck, spec } from '../sql/compile-fixtures.ts';
import { writeEdgeFile } from '../sql/feature-edges.ts';

// Filters answered from a rendering's index must keep exactly the rows DuckDB's WHERE keeps.
let instance: DuckDBInstance;
let c: DuckDBConnection;
let work: string;
let dataDir: string;
let file: string;
let n = 0;
/** Each format's rendering with records every key in memory, every second, every third, or as the server keeps them. */
const STRIDES = [1, 2, 3, STRIDE];
const entries: Record<'geojson' | 'csv', RenderedEntry[]> = { geojson: [], csv: [] };
let keys: bigint[] = [];
/** The file's filter index read apart, and read with its Features. */
let apart: FilterIndex | null;
let withFeatures: FilterIndex | null;
beforeAll(async () => {
  ({ instance, c } = await openDuck());
  work = await mkdtemp(path.join(os.tmpdir(), 'render-filter-'));
  dataDir = path.join(work, 'data');
  file = await writeEdgeFile(c, dataDir, hotspots, 7);
  apart = await readFilterIndex(c, spec(hotspots, dataDir, {}), file, 'sort');
  const keep = (r: RenderedText, index: FilterIndex | null) =>
    Promise.all(
      STRIDES.map(async (stride) => {
        const target = path.join(work, `rendering-${n++}`);
        await writeFile(target, r.text);
        return writeRecords(target, r.text.length, { keys: r.keys, offsets: r.offsets, index }, stride);
      }),
    );
  // The Features with their index read in the same pass, as renderings are made; the CSV's index read apart, as for CSV renderings.
  const written = (await writeFeatures(c, spec(hotspots, dataDir, {}), file, path.join(work, 'features'), () => true, 'sort'))!;
  withFeatures = written.index;
  const features = { keys: written.keys, offsets: written.offsets, text: await readFile(path.join(work, 'features')) };
  keys = [...new Set(features.keys)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  entries.geojson = await keep(features, withFeatures);
  entries.csv = await keep((await renderCsv(c, spec(hotspots, dataDir, {}), file, { scratch: path.join(work, 'scratch'), dir: work, hold: () => true }))!, apart);
});
afterAll(async () => {
  instance.closeSync();
  await rm(work, { recursive: true, force: true });
});

const box = (minLon: number, minLat: number, maxLon: number, maxLat: number): RowFilter => ({ kind: 'box', box: { minLon, minLat, maxLon, maxLat }, shapes: null });
const FILTERS: [string, RowFilter[]][] = [
  ['no filter', []],
  ['country PT', [{ kind: 'equals', column: 'country', value: 'PT' }]],
  ['country empty text', [{ kind: 'equals', column: 'country', value: '' }]],
  ['country none present', [{ kind: 'equals', column: 'country', value: 'ZZ' }]],
  ['countries', [{ kind: 'anyOf', column: 'country', values: ['PT', 'plain', 'ZZ', 'a,b'] }]],
  ['the whole world', [box(-180, -90, 180, 90)]],
  ['edges on values (0, -0, 1e-7, 100)', [box(-0, 0, 1e-7, 100)]],
  ['across the antimeridian', [box(170, -90, -170, 90)]],
  ['across the antimeridian at 0', [box(0, -1e300, -0, 1e300)]],
  ['unbounded doubles', [box(-Infinity, -Infinity, Infinity, Infinity)]],
  ['box and country', [box(-180, -90, 180, 90), { kind: 'anyOf', column: 'country', values: ['PT', ''] }]],
];

/** The window as today's paths write it: GeoJSON staged through a table, CSV by COPY. */
async function expected(format: 'geojson' | 'csv', filters: RowFilter[], from: bigint | null, to: bigint | null) {
  const s = spec(hotspots, dataDir, { filters });
  if (format === 'geojson') {
    const result = await runStaged(c, compileStaged({ spec: s, files: [file], select: FORMATS.geojson.rows, from, to, order: 'sort' })!, '');
    return { returned: result.rowCount, bytes: featureBytes(result) };
  }
  const target = path.join(work, `copy-${n++}.csv`);
  const returned = await copyInto(c, compileCopy(compileRows({ spec: s, files: [file], select: FORMATS.csv.rows, from, to, order: 'sort' }), CSV_COPY, target, work));
  return { returned, bytes: await readFile(target) };
}

/** The rows of one rendered file in the window, read whole as the server reads a small window. */
async function renderedRows(entry: RenderedEntry, w: RenderWindow) {
  const handles = new RenderHandles(1);
  const read = (a: number, b: number) => handles.read(entry.file, a, b);
  const { ranges, returned } = await locate(read, entry, w);
  const bytes = await gathered(rangePieces(read, ranges, Infinity));
  handles.forget(entry.file);
  return { bytes, returned };
}

async function fromIndex(format: 'geojson' | 'csv', filters: RowFilter[], from: bigint | null, to: bigint | null, stride: number) {
  const read = await renderedRows(entries[format][STRIDES.indexOf(stride)]!, { from, to, filters });
  return { returned: read.returned, bytes: read.bytes.subarray(format === 'geojson' && read.bytes.length > 0 ? 1 : 0) };
}

/** Windows over the whole file, inside it, at its edges, between keys, empty and before it. */
const WINDOWS = (): [bigint | null, bigint | null][] => [
  [null, null],
  [keys[1]!, keys[5]!],
  [keys[1]!, keys.at(-3)!],
  [keys[2]!, null],
  [null, keys[3]!],
  [keys[3]!, keys[3]!],
  [keys[4]! + 1n, keys[6]! - 1n],
  [keys.at(-3)!, null],
  [null, keys[1]!],
];

describe('filtered windows from a rendering\'s index: the rows DuckDB keeps, byte for byte', () => {
  it('hotspots\' filters and any box are indexed; a filter on another column is not', () => {
    expect(indexable(hotspots, FILTERS.flatMap(([, f]) => f))).toBe(true);
    expect(indexable(hotspots, [{ kind: 'equals', column: 'id', value: 'x' }])).toBe(false);
    expect(indexable(hotspots, [{ kind: 'after', key: ['2025-08-01T00:00:00Z', 'x'] }])).toBe(false);
  });

  it('a dataset with a filter on a column that is not text: a request without filters is still answered from the rendering', () => {
    const typed = { ...hotspots, filters: [...hotspots.filters, { ...hotspots.filters[0]!, column: 'type' }] };
    expect(indexable(typed, [])).toBe(true);
    expect(indexable(typed, [{ kind: 'equals', column: 'country', value: 'PT' }])).toBe(false);
  });

  it.each(FILTERS)('%s: edge values (NaN, ±Inf, -0, nulls, odd text), GeoJSON and CSV, whole file and a window', async (_name, filters) => {
    for (const [from, to] of WINDOWS()) {
      for (const format of ['geojson', 'csv'] as const) {
        const want = await expected(format, filters, from, to);
        for (const stride of STRIDES) {
          const got = await fromIndex(format, filters, from, to, stride);
          expect(got.returned, `${format} ${from} ${to} ${stride}`).toBe(want.returned);
          expect(got.bytes.equals(want.bytes), `${format} ${from} ${to} ${stride}`).toBe(true);
        }
      }
    }
  });

  // The index re-states the SQL's filters in JavaScript: besides the cases above, random filters
  // built from the file's own values, the edges around them and hostile doubles, compared with the
  // rows DuckDB's WHERE keeps (seeded, the file's values in order: the same cases every run).
  it('random boxes and country lists, alone and together: the index keeps the rows the SQL keeps', async () => {
    const present = (await c.runAndReadAll(`SELECT DISTINCT country, latitude, longitude FROM read_parquet('${file}') ORDER BY ALL`)).getRowObjects();
    const texts = [...new Set(present.map((r) => r.country).filter((v): v is string => typeof v === 'string')), '', 'ZZ', 'pt'];
    const coordinates = present.flatMap((r) => [r.latitude, r.longitude]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
    const edge = fc.oneof(
      fc.constantFrom(...coordinates),
      fc.constantFrom(...coordinates).map((v) => v + Number.EPSILON * Math.max(1, Math.abs(v))),
      fc.constantFrom(-Infinity, Infinity, -180, 180, -90, 90, 0, -0, 1e-7, -1e-300, 170, -170),
      fc.double({ min: -200, max: 200, noNaN: true }),
    );
    // A box of one meridian now and then (west = east): neither a plain box nor one across the antimeridian.
    const boxFilter = fc.tuple(edge, edge, edge, edge, fc.boolean()).map(([a, b, x, y, line]): RowFilter => box(a, Math.min(b, y), line ? a : x, Math.max(b, y)));
    const countryFilter = fc.oneof(
      fc.constantFrom(...texts).map((value): RowFilter => ({ kind: 'equals', column: 'country', value })),
      fc.uniqueArray(fc.constantFrom(...texts), { minLength: 1, maxLength: 4 }).map((values): RowFilter => ({ kind: 'anyOf', column: 'country', values })),
    );
    const filters = fc.oneof(fc.tuple(boxFilter), fc.tuple(countryFilter), fc.tuple(boxFilter, countryFilter), fc.tuple(countryFilter, boxFilter, boxFilter));
    const windows = WINDOWS();
    let kept = 0;
    await fc.assert(
      fc.asyncProperty(filters, fc.nat(windows.length - 1), async (f, w) => {
        const [from, to] = windows[w]!;
        const want = await expected('csv', f, from, to);
        const got = await fromIndex('csv', f, from, to, STRIDES[1]!);
        kept += want.returned > 0 ? 1 : 0;
        expect(got.returned).toBe(want.returned);
        expect(got.bytes.equals(want.bytes)).toBe(true);
      }),
      { seed: 47, numRuns: 80 },
    );
    expect(kept).toBeGreaterThan(10);
  });

  it('the filters keep some rows and drop others, so the comparison means something', async () => {
    const all = (await expected('csv', [], null, null)).returned;
    const kept = await Promise.all(FILTERS.map(async ([, f]) => (await expected('csv', f, null, null)).returned));
    expect(kept.some((k) => k > 0 && k < all)).toBe(true);
    expect(kept.filter((k) => k > 0).length).toBeGreaterThan(5);
  });

  it('the index read with the Features, from the vectors of each chunk, is the one read apart: nulls, NaN and -0 points, empty and unusual texts', async () => {
    expect(apart).not.toBeNull();
    expect(withFeatures).toEqual(apart);
    // A point is null when either coordinate is (the file has rows with only one of them null).
    const q = compileRows({ spec: spec(hotspots, dataDir, {}), files: [file], select: () => ({ fields: 'CAST(t.latitude IS NULL OR t.longitude IS NULL AS UTINYINT)', join: '' }), from: null, to: null, order: 'sort' });
    const nulls = (await c.runAndReadAll(q.sql, q.params)).getColumns()[0] as number[];
    expect([...apart!.nullPoint]).toEqual(nulls);
    expect(nulls.filter((x) => x === 1).length).toBeGreaterThan(1);
    // Each row's country code is its value as DuckDB gives it (a null: code 0); as bytes, since the client's
    // text decoding drops a leading byte order mark.
    const text = compileRows({ spec: spec(hotspots, dataDir, {}), files: [file], select: () => ({ fields: 'encode(t.country)', join: '' }), from: null, to: null, order: 'sort' });
    const blobs = (await c.runAndReadAll(text.sql, text.params)).getColumns()[0] as ({ bytes: Uint8Array } | null)[];
    const countries = blobs.map((b) => (b === null ? null : Buffer.from(b.bytes).toString('utf8')));
    const country = apart!.codes.get('country')!;
    const valueOf = new Map([...country.values].map(([v, code]) => [code, v]));
    expect([...country.rows].map((code) => (code === 0 ? null : valueOf.get(code)))).toEqual(countries);
    const lat = apart!.lat;
    expect(apart!.nullPoint.some((x) => x === 1) && lat.some((x) => Number.isNaN(x)) && lat.some((x) => Object.is(x, -0))).toBe(true);
    expect([...apart!.codes.get('country')!.values.keys()]).toEqual(expect.arrayContaining(['', 'PT']));
  });
});
