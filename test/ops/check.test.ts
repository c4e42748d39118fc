import { copyFile, mkdir, rm, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { fileColumns } from '../../datasets/index.ts';
import { hotspots } from '../../datasets/hotspots.ts';
import { sensorReadings } from '../../datasets/sensor-readings.ts';
import { fireApi } from '../helpers/cli.ts';
import { hotspot, reading } from '../helpers/fixtures.ts';
import { writeParquet } from '../helpers/parquet.ts';
import { writeSampleData } from '../helpers/sample-data.ts';

/** A data folder with one file or folder for each problem `fire-api check` must report. */
async function writeBrokenData(): Promise<string> {
  const dir = await writeSampleData();
  const p = (...parts: string[]) => path.join(dir, ...parts);
  const frpAsText = fileColumns(hotspots).map((c) => (c.name === 'frp' ? { ...c, type: 'VARCHAR' as const } : c));
  await writeParquet(p('hotspots/date=2025-08-01/wrong-type.parquet'), hotspots, [hotspot('w1', '2025-08-01T05:00:00Z', { frp: '12.5' })], frpAsText);
  await copyFile(p('hotspots/date=2025-08-02/a.parquet'), p('hotspots/date=2025-08-02/truncated.parquet'));
  await truncate(p('hotspots/date=2025-08-02/truncated.parquet'), 100);
  await writeParquet(p('hotspots/date=2025-08-02/outside.parquet'), hotspots, [hotspot('o1', '2025-08-03T01:00:00Z')]);
  // Valid, but stored latest first: servable, sorted on the fly.
  await writeParquet(p('sensor-readings/date=2025-08-02/unsorted.parquet'), sensorReadings, [reading('ST0001', '2025-08-02T12:00:00Z'), reading('ST0001', '2025-08-02T06:00:00Z')]);
  await mkdir(p('hotspots/date=2025-8-3'));
  await copyFile(p('hotspots/date=2025-08-01/a.parquet'), p('hotspots/date=2025-8-3/a.parquet'));
  await writeFile(p('hotspots/date=2025-08-01/_incoming.parquet'), 'half written');
  await writeFile(p('hotspots/date=2025-08-01/notes.txt'), 'operator notes');
  return dir;
}

interface Report {
  dataset: string;
  files: number;
  servable: number;
  failing: { path: string; problem: string }[];
  unsorted: string[];
  partitionsWithSeveralFiles: { folder: string; files: number }[];
  malformedFolders: string[];
  ignoredNames: string[];
}

describe('fire-api check', () => {
  let broken: string;
  beforeAll(async () => {
    broken = await writeBrokenData();
  });

  it('exits 0 and reports every file servable when nothing is wrong', async () => {
    const r = await fireApi(['check', '--data-dir', await writeSampleData()]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('hotspots: 2 files, 2 servable (0 unsorted), 0 failing; 0 partitions with several files');
    expect(r.stdout).toContain('fire-danger: 2 files, 2 servable (0 unsorted), 0 failing');
  });

  it('names each failing file with its problem (wrong type, truncated, rows outside the partition) and exits 1', async () => {
    const r = await fireApi(['check', '--data-dir', broken, '--json']);
    expect(r.code).toBe(1);
    const reports = (JSON.parse(r.stdout) as { datasets: Report[] }).datasets;
    const h = reports.find((x) => x.dataset === 'hotspots')!;
    expect(h.files).toBe(5);
    expect(h.servable).toBe(2);
    expect(h.failing).toEqual([
      { path: 'hotspots/date=2025-08-01/wrong-type.parquet', problem: 'column frp is VARCHAR, expected DOUBLE' },
      { path: 'hotspots/date=2025-08-02/outside.parquet', problem: "rows outside the partition's time range" },
      { path: 'hotspots/date=2025-08-02/truncated.parquet', problem: expect.stringMatching(/^unreadable: /) },
    ].sort((a, b) => a.path.localeCompare(b.path)).map((f) => expect.objectContaining(f)));
    expect(h.partitionsWithSeveralFiles).toEqual([
      { folder: 'hotspots/date=2025-08-01', files: 2 },
      { folder: 'hotspots/date=2025-08-02', files: 3 },
    ]);
    expect(h.malformedFolders).toEqual(['hotspots/date=2025-8-3']);
    expect(h.ignoredNames).toEqual(['hotspots/date=2025-08-01/_incoming.parquet', 'hotspots/date=2025-08-01/notes.txt']);
    const readings = reports.find((x) => x.dataset === 'sensor-readings')!;
    expect(readings).toMatchObject({ files: 2, servable: 2, failing: [], unsorted: ['sensor-readings/date=2025-08-02/unsorted.parquet'] });
    expect(reports.find((x) => x.dataset === 'burnt-areas')).toMatchObject({ files: 1, servable: 1, failing: [], unsorted: [] });
  });

  it('prints the same findings for a person, one dataset when asked', async () => {
    const r = await fireApi(['check', '--data-dir', broken, '--dataset', 'hotspots']);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('hotspots: 5 files, 2 servable (0 unsorted), 3 failing; 2 partitions with several files');
    expect(lines).toContain('  failing   hotspots/date=2025-08-01/wrong-type.parquet: column frp is VARCHAR, expected DOUBLE');
    expect(lines).toContain('  malformed hotspots/date=2025-8-3 (not a valid partition key: never read)');
    expect(lines).toContain('  ignored   hotspots/date=2025-08-01/notes.txt');
    expect(r.stdout).not.toContain('sensor-readings');
  });

  it('a servable but unsorted file does not fail the check', async () => {
    const r = await fireApi(['check', '--data-dir', broken, '--dataset', 'sensor-readings']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('  unsorted  sensor-readings/date=2025-08-02/unsorted.parquet');
  });

  it('reports a missing dataset folder as not checked, without failing', async () => {
    const dir = await writeSampleData();
    await rm(path.join(dir, 'burnt-areas'), { recursive: true });
    const r = await fireApi(['check', '--data-dir', dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('burnt-areas: not checked (folder missing or unreadable)');
    expect(r.stdout).toContain('hotspots: 2 files, 2 servable');
  });

  it('exits 2 on usage errors: unknown dataset, unknown option, missing data folder', async () => {
    for (const args of [['--dataset', 'volcanoes'], ['--frobnicate'], ['--data-dir', path.join(broken, 'nope')]]) {
      const r = await fireApi(['check', ...(args[0] === '--data-dir' ? [] : ['--data-dir', broken]), ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^fire-api: /);
      expect(r.stdout).toBe('');
    }
  });
});
