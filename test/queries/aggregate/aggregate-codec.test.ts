import { describe, expect, it } from 'vitest';
import { readRows, RowWriter } from '../../../queries/aggregate/aggregate-codec.ts';
import type { AggregateColumn, AggregateRow } from '../../../queries/aggregate/aggregate-rows.ts';

const COLUMNS: AggregateColumn[] = [
  { name: 'bucket', type: 'time' },
  { name: 'stationId', type: 'text' },
  { name: 'cellLon', type: 'double' },
  { name: 'count', type: 'integer' },
  { name: 'frp.mean', type: 'double' },
];

const ROWS: AggregateRow[] = [
  { values: [1_735_689_600_000_000n, 'ST-001', -179.99, 3, 0.1], geometry: { type: 'Point', coordinates: [-8.25, 39.5] } },
  { values: [-62_135_596_800_000_000n, '', null, 1, null], geometry: null },
  { values: [9_223_372_036_854_775_807n, 'Åland "quoted", ✓ 🔥', 180, 2 ** 53 - 1, 5e-324], geometry: { type: 'Polygon', coordinates: [[[-0.25, -90], [0, -90], [0, -89.75], [-0.25, -89.75], [-0.25, -90]]] } },
  { values: [0n, null, -0, 0, -1.7976931348623157e308], geometry: null },
];

describe('groups written to a spool and read back', () => {
  it('are the same values and geometry, bit for bit, whatever the reads cut the bytes into', () => {
    const writer = new RowWriter(COLUMNS);
    ROWS.forEach((r) => writer.write(r));
    const bytes = Buffer.from(writer.take());
    expect(readRows(COLUMNS, bytes, 0, Infinity)).toEqual({ rows: ROWS, at: bytes.length });
    expect(Object.is(readRows(COLUMNS, bytes, 0, Infinity).rows[3]!.values[2], -0)).toBe(true);
    // A read that ends inside a row gives the whole rows before it, and where the partial one starts.
    for (let end = 0; end <= bytes.length; end++) {
      const { rows, at } = readRows(COLUMNS, bytes.subarray(0, end), 0, Infinity);
      expect(rows).toEqual(ROWS.slice(0, rows.length));
      expect(readRows(COLUMNS, bytes, at, Infinity).rows).toEqual(ROWS.slice(rows.length));
    }
    expect(readRows(COLUMNS, bytes, 0, 2).rows).toEqual(ROWS.slice(0, 2));
  });

  it('grows its buffer for rows larger than it', () => {
    const writer = new RowWriter(COLUMNS);
    const long = { values: [1n, 'x'.repeat(200_000), 1, 1, 1], geometry: null };
    writer.write(long);
    writer.write(ROWS[0]!);
    const bytes = Buffer.from(writer.take());
    expect(readRows(COLUMNS, bytes, 0, Infinity).rows).toEqual([long, ROWS[0]]);
  });
});
