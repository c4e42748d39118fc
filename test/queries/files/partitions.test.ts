import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { burntAreas } from '../../../datasets/burnt-areas.ts';
import { hotspots } from '../../../datasets/hotspots.ts';
import { sensorStations } from '../../../datasets/sensor-stations.ts';
import { DatasetUnavailableError } from '../../../queries/errors.ts';
import { formatInstant, parseInstant } from '../../../queries/instant.ts';
import { isDataFileName, listFiles, listKeyValues, listPartitions, partitionRange } from '../../../queries/files/partitions.ts';
import type { Window } from '../../../queries/window.ts';
import { tempDir } from '../../helpers/fixtures.ts';

const at = (text: string) => parseInstant(text)!;
const win = (from: string, to: string): Window => ({ from: at(from), to: at(to) });

function range(kind: 'date' | 'month', key: string) {
  const r = partitionRange(kind, key);
  return r && { start: formatInstant(r.start), end: formatInstant(r.end) };
}

describe('partitionRange', () => {
  it.each([
    ['date', '2025-08-01', '2025-08-01T00:00:00Z', '2025-08-02T00:00:00Z'],
    ['date', '2025-12-31', '2025-12-31T00:00:00Z', '2026-01-01T00:00:00Z'],
    ['date', '2024-02-28', '2024-02-28T00:00:00Z', '2024-02-29T00:00:00Z'],
    ['date', '2024-02-29', '2024-02-29T00:00:00Z', '2024-03-01T00:00:00Z'],
    ['month', '2025-08', '2025-08-01T00:00:00Z', '2025-09-01T00:00:00Z'],
    ['month', '2025-12', '2025-12-01T00:00:00Z', '2026-01-01T00:00:00Z'],
    ['month', '2024-02', '2024-02-01T00:00:00Z', '2024-03-01T00:00:00Z'],
    ['month', '2025-02', '2025-02-01T00:00:00Z', '2025-03-01T00:00:00Z'],
    ['month', '2025-01', '2025-01-01T00:00:00Z', '2025-02-01T00:00:00Z'],
  ] as const)('%s=%s covers [%s, %s)', (kind, key, start, end) => {
    expect(range(kind, key)).toEqual({ start, end });
  });

  it.each([
    ['date', '2025-02-29'],
    ['date', '2025-8-01'],
    ['date', '2025-08'],
    ['date', '2025-08-01T00:00'],
    ['date', 'latest'],
    ['month', '2025-13'],
    ['month', '2025-00'],
    ['month', '2025-8'],
    ['month', '2025-08-01'],
    ['month', ''],
  ] as const)('a malformed %s key %j gives null', (kind, key) => {
    expect(partitionRange(kind, key)).toBeNull();
  });
});

describe('isDataFileName', () => {
  it.each([
    ['a.parquet', true],
    ['_a.parquet', false],
    ['.a.parquet', false],
    ['a.parquet.tmp', false],
    ['a.PARQUET', false],
    ['a.csv', false],
  ])('%s is read: %s', (name, expected) => {
    expect(isDataFileName(name)).toBe(expected);
  });
});

describe('listing a dataset folder', () => {
  let dir: string;
  const touch = async (rel: string, bytes = 'x') => {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), bytes);
  };

  beforeAll(async () => {
    dir = await tempDir();
    // Created out of order so that sorting is what puts them in order.
    for (const key of ['2025-08-03', '2025-07-31', '2025-08-02', '2025-08-01']) await touch(`hotspots/date=${key}/b.parquet`);
    await touch('hotspots/date=2025-08-01/a.parquet', 'longer');
    for (const ignored of ['_writing.parquet', '.hidden.parquet', 'notes.txt', 'c.parquet.tmp']) await touch(`hotspots/date=2025-08-01/${ignored}`);
    await mkdir(path.join(dir, 'hotspots/date=2025-08-01/folder.parquet'), { recursive: true });
    await touch('hotspots/date=garbage/a.parquet');
    await touch('hotspots/date=2025-02-30/a.parquet');
    await touch('hotspots/_date=2025-08-01/a.parquet');
    await touch('hotspots/date=2025-08-02.parquet');
    for (const key of ['2026-01', '2025-12', '2025-11']) await touch(`burnt-areas/month=${key}/a.parquet`);
    for (const value of ['b', 'a', 'c_d']) await mkdir(path.join(dir, `fire-danger/model=${value}`), { recursive: true });
    await mkdir(path.join(dir, 'fire-danger/model='), { recursive: true });
    await mkdir(path.join(dir, 'fire-danger/level=x'), { recursive: true });
    await touch('fire-danger/model=file');
  });

  const keys = async (from: string, to: string) => (await listPartitions(path.join(dir, 'hotspots'), hotspots, win(from, to))).map((p) => p.key);

  it('keeps partitions overlapping [from, to), excluding one ending exactly at from and one starting exactly at to', async () => {
    expect(await keys('2025-08-01', '2025-08-03')).toEqual(['2025-08-01', '2025-08-02']);
  });

  it('keeps a partition overlapping the window by one microsecond at either end', async () => {
    expect(await keys('2025-07-31T23:59:59.999999Z', '2025-08-02T00:00:00.000001Z')).toEqual(['2025-07-31', '2025-08-01', '2025-08-02']);
  });

  it('a window inside one day keeps only that day', async () => {
    expect(await keys('2025-08-02T10:00Z', '2025-08-02T11:00Z')).toEqual(['2025-08-02']);
  });

  it('returns partitions in time order with their range', async () => {
    const parts = await listPartitions(path.join(dir, 'hotspots'), hotspots, win('2025-01-01', '2026-01-01'));
    expect(parts.map((p) => [p.key, formatInstant(p.start), formatInstant(p.end)])).toEqual([
      ['2025-07-31', '2025-07-31T00:00:00Z', '2025-08-01T00:00:00Z'],
      ['2025-08-01', '2025-08-01T00:00:00Z', '2025-08-02T00:00:00Z'],
      ['2025-08-02', '2025-08-02T00:00:00Z', '2025-08-03T00:00:00Z'],
      ['2025-08-03', '2025-08-03T00:00:00Z', '2025-08-04T00:00:00Z'],
    ]);
  });

  it('lists only data files, sorted by name, with their size', async () => {
    const [part] = await listPartitions(path.join(dir, 'hotspots'), hotspots, win('2025-08-01', '2025-08-02'));
    expect(part?.files.map((f) => [path.relative(dir, f.path), f.size])).toEqual([
      ['hotspots/date=2025-08-01/a.parquet', 6],
      ['hotspots/date=2025-08-01/b.parquet', 1],
    ]);
    expect(part?.files[0]?.mtimeMs).toBeGreaterThan(0);
  });

  it('prunes month partitions across the year boundary', async () => {
    const parts = await listPartitions(path.join(dir, 'burnt-areas'), burntAreas, win('2025-12-31T23:00Z', '2026-01-01T01:00Z'));
    expect(parts.map((p) => p.key)).toEqual(['2025-12', '2026-01']);
  });

  it('refuses a dataset without a time axis', async () => {
    await expect(listPartitions(path.join(dir, 'hotspots'), sensorStations, win('2025-08-01', '2025-08-02'))).rejects.toThrow(/not partitioned/);
  });

  it('listKeyValues gives the non-empty values of key= folders, sorted, ignoring files and other keys', async () => {
    expect(await listKeyValues(path.join(dir, 'fire-danger'), 'model', 'fire-danger')).toEqual(['a', 'b', 'c_d']);
  });

  it.each([
    ['listPartitions', () => listPartitions(path.join(dir, 'missing'), hotspots, win('2025-08-01', '2025-08-02'))],
    ['listKeyValues', () => listKeyValues(path.join(dir, 'missing'), 'model', 'hotspots')],
    ['listFiles', () => listFiles(path.join(dir, 'missing'), 'hotspots')],
  ])('%s on a missing folder throws DatasetUnavailableError naming the dataset', async (_name, call) => {
    const error = await call().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatasetUnavailableError);
    expect((error as DatasetUnavailableError).dataset).toBe('hotspots');
  });

  it('listFiles on a folder that is a file throws DatasetUnavailableError', async () => {
    await expect(listFiles(path.join(dir, 'fire-danger/model=file'), 'fire-danger')).rejects.toBeInstanceOf(DatasetUnavailableError);
  });
});
