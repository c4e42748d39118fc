import { statSync } from 'node:fs';
import { readdir, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { RowWriter } from '../../../queries/aggregate/aggregate-codec.ts';
import type { AggregateColumn, AggregateRow } from '../../../queries/aggregate/aggregate-rows.ts';
import { Spool, spoolChunks, type SpooledPart } from '../../../queries/aggregate/spool/aggregate-spool.ts';
import { readSpool } from '../../../queries/aggregate/spool/aggregate-spool-read.ts';
import { TempBudget } from '../../../queries/engine/temp-budget.ts';
import type { Instant } from '../../../queries/instant.ts';
import { tempDir } from '../../helpers/fixtures.ts';

const COLUMNS: AggregateColumn[] = [
  { name: 'bucket', type: 'time' },
  { name: 'count', type: 'integer' },
];
const row = (bucket: bigint, count: number): AggregateRow => ({ values: [bucket as Instant, count], geometry: null });

let dir: string;
let budget: TempBudget;
beforeEach(async () => {
  dir = await tempDir();
  budget = new TempBudget(1000, 1);
});
const spoolIn = () => new Spool({ dir, budget, signal: new AbortController().signal });

/** A part file of `rows`, written as spoolChunks writes one. */
async function partOf(spool: Spool, rows: AggregateRow[]): Promise<SpooledPart> {
  const writer = new RowWriter(COLUMNS);
  rows.forEach((r) => writer.write(r));
  const part = { path: spool.file('part'), rows: rows.length, runs: [] };
  await writeFile(part.path, writer.take());
  return part;
}

describe('a spool of groups', () => {
  it('leaves no file when it is disposed while a part\'s file is being created, and makes none after', async () => {
    const spool = spoolIn();
    // A result without chunks: the visitor it is read with is never applied.
    const spooling = spoolChunks([], async () => null, spool, COLUMNS, () => () => undefined);
    spool.dispose();
    await expect(spooling).rejects.toThrow();
    expect(() => spool.file('part')).toThrow();
    expect(await readdir(dir)).toEqual([]);
  });

  it('counts a removed file\'s bytes no longer: the files to come fit in the space it held', async () => {
    const spool = spoolIn();
    const file = spool.file('part.parquet');
    await writeFile(file, Buffer.alloc(600));
    spool.grow(600);
    await spool.remove(file, 600);
    // Counted twice, these 600 bytes would ask for 1,200 of a budget of 1,000.
    expect(() => spool.grow(600)).not.toThrow();
    spool.dispose();
    expect([budget.usedBytes, await readdir(dir)]).toEqual([0, []]);
  });

  it('reserves no space once disposed: a part that grows after the request has ended throws', () => {
    const spool = spoolIn();
    spool.grow(100);
    spool.dispose();
    expect(() => spool.grow(100)).toThrow();
    expect(budget.usedBytes).toBe(0);
  });

  it('throws rather than fill a part that ends inside a group with the next part\'s groups', async () => {
    const partsIn = async (spool: Spool) => [await partOf(spool, [row(1n, 1), row(1n, 2), row(2n, 3)]), await partOf(spool, [row(3n, 4), row(3n, 5), row(4n, 6)])];
    // Whole, the first five groups (a cut answer) are read back as written.
    const whole = spoolIn();
    expect([...readSpool(whole, await partsIn(whole), COLUMNS, 5)].flat().map((r) => r.values[1])).toEqual([1, 2, 3, 4, 5]);
    const spool = spoolIn();
    const parts = await partsIn(spool);
    await truncate(parts[0]!.path, statSync(parts[0]!.path).size - 1);
    expect(() => [...readSpool(spool, parts, COLUMNS, 5)]).toThrow(/2 whole groups of the 3/);
    expect(await readdir(dir)).toEqual([]);
  });
});
