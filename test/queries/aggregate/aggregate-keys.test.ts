import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { CELL_SIZES, cellEdge, cellHundredths, type AggregateShape } from '../../../queries/aggregate/aggregate-shape.ts';
import { cellKeySql, guessSql, rawCellSql } from '../../../queries/aggregate/aggregate-keys.ts';
import { aggregateColumns, compileAggregate } from '../../../queries/aggregate/compile-aggregate.ts';
import { chunkReader } from '../../../queries/aggregate/aggregate-rows.ts';
import { hotspot, tempDir } from '../../helpers/fixtures.ts';
import { writeParquet } from '../../helpers/parquet.ts';
import { at, openDuck, spec } from '../sql/compile-fixtures.ts';

let instance: DuckDBInstance;
let c: DuckDBConnection;
beforeAll(async () => ({ instance, c } = await openDuck()));
afterAll(() => instance.closeSync());

const window = { from: at('2025-08-01'), to: at('2025-08-03') };
const shape = (over: Partial<AggregateShape> = {}): AggregateShape => ({ interval: 'all', keys: [], cellHundredths: null, stats: [{ name: 'count' }], ...over });

/** The next double above (+1) or below (−1) x. */
function nextDouble(x: number, step: 1 | -1): number {
  if (x === 0) return step * 5e-324;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  view.setBigInt64(0, view.getBigInt64(0) + BigInt(x > 0 ? step : -step));
  return view.getFloat64(0);
}

/** The cell of v by the rule itself: cellEdge(i) ≤ v < cellEdge(i + 1), the far edge in the last cell, null outside. */
function cellOf(v: number, hundredths: number, origin: -180 | -90): number | null {
  if (!(v >= origin && v <= -origin)) return null;
  const last = (-origin * 200) / hundredths - 1;
  let i = Math.min(Math.floor(((v - origin) * 100) / hundredths), last);
  while (i > 0 && cellEdge(i, hundredths, origin) > v) i--;
  while (i < last && cellEdge(i + 1, hundredths, origin) <= v) i++;
  return i;
}

describe('grid cells', () => {
  /** Values on, and one double either side of, edges across the range (the first, the last, 180 or 90 itself), and values no cell holds. */
  function probes(hundredths: number, origin: -180 | -90): number[] {
    const cells = (-origin * 200) / hundredths;
    const edges = [0, 1, 2, 3, Math.floor(cells / 3), Math.floor(cells / 2) - 1, Math.floor(cells / 2), cells - 1, cells, ...Array.from({ length: 40 }, (_, k) => (k * 7919) % cells)];
    const near = edges.flatMap((i) => { const e = cellEdge(i, hundredths, origin); return [e, nextDouble(e, 1), nextDouble(e, -1)]; });
    return [...near, 0, -0, 5e-324, -5e-324, origin * 3, -origin * 3, NaN, Infinity, -Infinity, 1e300, -1e300];
  }

  it.each(CELL_SIZES)('puts points on and beside every kind of edge in the cell the rule says, at %s°', async (size) => {
    const hundredths = cellHundredths(size);
    const points = [...probes(hundredths, -180).map((lon) => [lon, 0.5]), ...probes(hundredths, -90).map((lat) => [0.5, lat])] as [number, number][];
    const expected = new Map<string, number>();
    for (const [lon, lat] of points) {
      const [x, y] = [cellOf(lon, hundredths, -180), cellOf(lat, hundredths, -90)];
      const key = x === null || y === null ? 'null,null' : `${cellEdge(x, hundredths, -180)},${cellEdge(y, hundredths, -90)}`;
      expected.set(key, (expected.get(key) ?? 0) + 1);
    }
    const dir = await tempDir();
    const file = path.join(dir, 'hotspots/date=2025-08-01/a.parquet');
    // As text: the literal is parsed as a double exactly (NaN, ±Infinity, −0 and every digit kept).
    const text = (v: number) => (Object.is(v, -0) ? '-0.0' : String(v));
    await writeParquet(file, hotspots, points.map(([lon, lat], i) => hotspot(`p${i}`, '2025-08-01T10:00:00Z', { longitude: text(lon), latitude: text(lat) })));
    const s = shape({ keys: [hotspots.aggregate!.keys.find((k) => k.kind === 'grid')!], cellHundredths: hundredths });
    const query = { spec: spec(hotspots, dir), files: [file], window, shape: s, limit: 100_000 };
    const q = compileAggregate(query);
    const result = await c.run(q.sql, q.params);
    const read = chunkReader(result.columnNames(), s, aggregateColumns(query));
    const got = new Map<string, number>();
    for (let i = 0; i < result.chunkCount; i++) for (const g of read(result.getChunk(i))) got.set(`${g.values[1]},${g.values[2]}`, g.values[3] as number);
    expect(got).toEqual(expected);
    expect(expected.get('null,null')).toBeGreaterThan(0);
  });
});

describe('grid cells at every edge', () => {
  it.each(CELL_SIZES)('puts each edge of %s° cells, and the double either side of it, where the rule says', async (size) => {
    const hundredths = cellHundredths(size);
    for (const origin of [-180, -90] as const) {
      // Every edge of the hundredths grid (those of every size among them), as cellEdge computes it, and its neighbours.
      const probes = `SELECT unnest([e, nextafter(e, 1e9), nextafter(e, -1e9)]) AS vx FROM (SELECT k / 100 AS e FROM range(${origin * 100}, ${-origin * 100 + 1}) AS t(k))`;
      const raw = `SELECT vx, ${rawCellSql('vx', origin, hundredths)} AS k FROM (SELECT vx, ${guessSql('vx')} AS ix, ${guessSql('vx')} AS iy FROM (${probes}))`;
      // The other coordinate in its first cell: only this one decides.
      const cell = origin === -180 ? cellKeySql('k', '0', hundredths)[0] : cellKeySql('0', 'k', hundredths)[1];
      const result = await c.runAndReadAll(`SELECT vx, ${cell} AS cell FROM (${raw})`);
      const wrong = result.getRows().filter(([v, got]) => cellOf(v as number, hundredths, origin) !== (got === null ? null : Number(got)));
      expect(result.currentRowCount).toBe(3 * (-origin * 200 + 1));
      expect(wrong.slice(0, 3)).toEqual([]);
    }
  });
});
