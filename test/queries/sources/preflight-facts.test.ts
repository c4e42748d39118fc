import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { FileChecker } from '../../../queries/files/check.ts';
import { resolveSources } from '../../../queries/sources/preflight.ts';
import { parseInstant } from '../../../queries/instant.ts';
import { factsFor } from '../../../queries/aggregate/aggregate-slices.ts';
import { CHAIN } from '../../helpers/sample-data.ts';
import { hotspot, tempDir, writeChain } from '../../helpers/fixtures.ts';
import { writeParquet } from '../../helpers/parquet.ts';
import { openDuck } from '../sql/compile-fixtures.ts';

let instance: DuckDBInstance;
let c: DuckDBConnection;
beforeAll(async () => ({ instance, c } = await openDuck()));
afterAll(() => instance.closeSync());

it("hands each listed file's facts, as the start-up or background checks found them, to the statements of a window, which keep what holds for all of theirs", async () => {
  const dataDir = await tempDir();
  await writeChain(dataDir, 'hotspots', CHAIN);
  const file = (day: string) => path.join(dataDir, `hotspots/date=${day}/part.parquet`);
  await writeParquet(file('2025-08-01'), hotspots, [hotspot('a', '2025-08-01T10:00:00Z', { frp: 3.5 }), hotspot('b', '2025-08-01T11:00:00Z', { frp: 0, longitude: 180 })]);
  await writeParquet(file('2025-08-02'), hotspots, [hotspot('c', '2025-08-02T10:00:00Z', { frp: 1e-6 })]);
  await writeParquet(file('2025-08-03'), hotspots, [hotspot('d', '2025-08-03T10:00:00Z', { latitude: 90.25 })]);
  const ctx = { dataDir, checker: new FileChecker(dataDir), connection: async () => c, nowMs: Date.now(), signal: new AbortController().signal };
  const window = { from: parseInstant('2025-08-01')!, to: parseInstant('2025-08-04')! };
  const request = { descriptor: hotspots, window, folderValue: undefined, needsStations: false, correction: null };
  // A request that checks files itself does not wait for their facts: nothing is known of them yet.
  const unknown = await resolveSources(ctx, request);
  expect(unknown.factsByFile!.size).toBe(0);
  expect(factsFor(unknown, [file('2025-08-01')])).toEqual({ common: new Set(), inGrid: false });
  // The start-up and background checks (a checker of their own, in a child process) find them, and hand their verdicts over.
  const background = new FileChecker(dataDir);
  for (const f of unknown.partitions.flatMap((p) => p.files)) ctx.checker.remember(hotspots, f, await background.check(c, hotspots, f));
  const sources = await resolveSources(ctx, request);
  const all = hotspots.aggregate!.measures;
  expect(Object.fromEntries([...sources.factsByFile!].map(([f, facts]) => [path.basename(path.dirname(f)), facts]))).toEqual({
    'date=2025-08-01': { common: all, inGrid: true },
    'date=2025-08-02': { common: all.filter((m) => m !== 'frp'), inGrid: true },
    'date=2025-08-03': { common: all, inGrid: false },
  });
  const proven = (...days: string[]) => {
    const p = factsFor(sources, days.map(file));
    return { common: [...p.common], inGrid: p.inGrid };
  };
  expect(proven('2025-08-01')).toEqual({ common: all, inGrid: true });
  expect(proven('2025-08-01', '2025-08-02')).toEqual({ common: all.filter((m) => m !== 'frp'), inGrid: true });
  expect(proven('2025-08-01', '2025-08-03')).toEqual({ common: all, inGrid: false });
  // A file not inspected (here: not listed), or none at all, proves nothing.
  expect(proven('2025-08-01', '2025-08-09')).toEqual({ common: [], inGrid: false });
  expect(proven()).toEqual({ common: [], inGrid: false });
});
