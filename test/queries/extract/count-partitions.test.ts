import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../../datasets/index.ts';
import { listPartitions, type Partition } from '../../../queries/files/partitions.ts';
import { countByFile, countPartitions, findCut } from '../../../queries/extract/plan.ts';
import { parseInstant } from '../../../queries/instant.ts';
import { ALL_TIME } from '../../../queries/window.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { writeBulkHotspots } from '../../helpers/parquet.ts';
import { openDuck, spec } from '../sql/compile-fixtures.ts';

// Ten days of 100 hotspots each: counting stops at the partition where a response of rowLimit
// rows is cut, and the cut is the one a count of every partition gives.
const HOTSPOTS = DATASETS.find((d) => d.name === 'hotspots')!;
let instance: DuckDBInstance;
let c: DuckDBConnection;
let dataDir: string;
let parts: Partition[];
beforeAll(async () => {
  ({ instance, c } = await openDuck());
  dataDir = await tempDir();
  for (let day = 1; day <= 9; day++) await writeBulkHotspots(path.join(dataDir, `hotspots/date=2025-08-0${day}/a.parquet`), `2025-08-0${day}`, 100, 1, 600);
  parts = await listPartitions(path.join(dataDir, 'hotspots'), HOTSPOTS, ALL_TIME);
}, 60_000);
afterAll(() => instance.closeSync());

const WINDOW = { from: parseInstant('2025-08-01')!, to: parseInstant('2025-08-10')! };
const footers = () => new Map(parts.flatMap((p) => p.files.map((f) => [f.path, 100] as const)));

async function everyCount(s: ReturnType<typeof spec>): Promise<number[]> {
  const byFile = await countByFile(c, s, parts, WINDOW);
  return parts.map((p) => p.files.reduce((n, f) => n + (byFile.get(f.path) ?? 0), 0));
}

describe('countPartitions', () => {
  it('counts partitions in order only until more rows than the limit are found; the cut is the same as with every partition counted', async () => {
    const s = spec(HOTSPOTS, dataDir);
    for (const [rowLimit, counted] of [[150, 2], [250, 3], [99, 1], [2000, 9]] as const) {
      const counts = await countPartitions(c, { spec: s, partitions: parts, window: WINDOW, rowsByFile: footers(), rowLimit });
      expect(counts.filter((n) => n > 0), `rowLimit ${rowLimit}`).toHaveLength(counted);
      const all = await everyCount(s);
      const cut = (n: number[]) => findCut(c, { spec: s, partitions: parts, counts: n, window: WINDOW, rowLimit });
      expect(await cut(counts)).toEqual(await cut(all));
    }
  });

  it('with a filter that finds few rows, or footers it does not know, it goes on counting (rounds of growing size) until the limit is passed or all are counted', async () => {
    const s = spec(HOTSPOTS, dataDir, { filters: [{ kind: 'box', box: { minLon: -8.01, minLat: 39, maxLon: -8, maxLat: 39.01 }, shapes: null }] });
    const all = await everyCount(s);
    expect(all.every((n) => n > 0 && n < 20)).toBe(true);
    const counts = await countPartitions(c, { spec: s, partitions: parts, window: WINDOW, rowsByFile: footers(), rowLimit: 40 });
    const sum = (n: number[]) => n.reduce((a, b) => a + b, 0);
    expect(sum(counts)).toBeGreaterThan(40);
    const n = counts.filter((x) => x > 0).length;
    expect(n).toBeLessThan(9);
    expect(counts.slice(0, n)).toEqual(all.slice(0, n));
    expect(counts.slice(n).every((x) => x === 0)).toBe(true);
    expect(await countPartitions(c, { spec: s, partitions: parts, window: WINDOW, rowsByFile: new Map(), rowLimit: 1000 })).toEqual(all);
  });
});
