import { DuckDBDoubleVector, DuckDBInstance, type DuckDBDataChunk } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { columnReader } from '../../../queries/encode/vector-reader.ts';

let instance: DuckDBInstance;
beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
});
afterAll(() => instance.closeSync());

/** Every chunk of a statement's result. */
async function chunksOf(sql: string): Promise<DuckDBDataChunk[]> {
  const c = await instance.connect();
  try {
    const result = await c.run(sql);
    return Array.from({ length: result.chunkCount }, (_, i) => result.getChunk(i));
  } finally {
    c.closeSync();
  }
}

// The reader reads the vectors through the library's public bindings only (the case of a vector
// it does not know, when it read the library's own fields, is gone with them).
// 5,000 rows (three chunks): nulls at rows whose index is a multiple of 7 or 64 apart (both halves of each 64-bit mask word), a column without any,
// one null throughout, and doubles of every kind: negative zero, subnormal, infinite and not a number.
const SQL = `SELECT
  CASE WHEN i % 7 = 0 OR i % 64 IN (31, 32, 63) THEN NULL ELSE i * 0.25::DOUBLE - 300 END AS d,
  CASE WHEN i % 5 = 0 THEN NULL WHEN i % 5 = 1 THEN -0.0 WHEN i % 5 = 2 THEN 5e-324 WHEN i % 5 = 3 THEN 'Infinity'::DOUBLE ELSE 'NaN'::DOUBLE END AS odd,
  i * 1.5::DOUBLE AS whole,
  NULL::DOUBLE AS none,
  CASE WHEN i % 3 = 0 THEN NULL ELSE 'k' || i END AS text,
  CASE WHEN i % 11 = 0 THEN NULL ELSE i * 1000000000000 END AS big,
  CAST(i AS HUGEINT) * 1267650600228229401496703205376 AS huge,
  CASE WHEN i % 13 = 0 THEN NULL WHEN i % 13 = 1 THEN []::DOUBLE[] WHEN i % 13 = 2 THEN [NULL, i * 0.5, NULL, -0.0]::DOUBLE[] ELSE [i * 1e-9, 'NaN'::DOUBLE, -i * 1e300][1:1 + i % 3] END AS list
FROM range(5000) t(i) ORDER BY i`;

/** The same value: numbers by Object.is (−0 and NaN told apart), a list of doubles (the reader's view) by its items without the nulls, anything else by its text. */
function same(a: unknown, b: unknown): boolean {
  if (a instanceof Float64Array) {
    const items = (b as { items: (number | null)[] }).items.filter((x) => x !== null);
    return a.length === items.length && items.every((x, i) => Object.is(a[i], x));
  }
  return typeof a === 'number' || typeof b === 'number' ? Object.is(a, b) : String(a) === String(b);
}

describe('a chunk column read by row', () => {
  it('gives what getItem gives, null for null, for doubles and lists of doubles (read from the vectors themselves; a list\'s null items left out) and every other type', async () => {
    const chunks = await chunksOf(SQL);
    expect(chunks.length).toBeGreaterThan(1);
    let [rows, nulls, doubles] = [0, 0, 0];
    for (const chunk of chunks) {
      for (let j = 0; j < chunk.columnCount; j++) {
        const vector = chunk.getColumnVector(j);
        const read = columnReader(chunk, j);
        if (vector instanceof DuckDBDoubleVector) doubles++;
        for (let r = 0; r < chunk.rowCount; r++) {
          const [got, want] = [read(r), vector.getItem(r)];
          if (!same(got, want)) expect({ j, r, got }).toEqual({ j, r, got: want });
          if (want === null) nulls++;
        }
      }
      rows += chunk.rowCount;
    }
    expect(rows).toBe(5000);
    expect(doubles).toBe(4 * chunks.length);
    expect(nulls).toBeGreaterThan(5000);
  });

  it('reads a DOUBLE column from the vector\'s data, nulls included: no value object made by the library', async () => {
    const [chunk] = await chunksOf(SQL);
    const calls = { n: 0 };
    const getColumnVector = chunk!.getColumnVector.bind(chunk);
    chunk!.getColumnVector = (j: number) => (calls.n++, getColumnVector(j));
    for (const j of [0, 1, 3]) {
      const read = columnReader(chunk!, j);
      for (let r = 0; r < chunk!.rowCount; r++) read(r);
    }
    expect(calls.n).toBe(0);
    columnReader(chunk!, 4);
    expect(calls.n).toBe(1);
  });

});
