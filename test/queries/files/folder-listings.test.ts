import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { FolderListings } from '../../../queries/files/folder-listings.ts';
import { listFiles, listPartitions } from '../../../queries/files/partitions.ts';
import { ALL_TIME } from '../../../queries/window.ts';
import { tempDir } from '../../helpers/fixtures.ts';

const names = async (dir: string, listings: FolderListings) => (await listFiles(dir, 'hotspots', listings)).map((f) => path.basename(f.path));
const keys = async (dir: string, listings: FolderListings) => (await listPartitions(dir, hotspots, ALL_TIME, listings)).map((p) => p.key);
/** A whole second long ago: the time a folder keeps when set back to it. */
const LONG_AGO = new Date('2025-01-01T00:00:00Z');

describe('FolderListings: a folder is listed again only when its modification time changes', () => {
  it('a settled folder is answered from what was found (proved by changing it and setting its time back)', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'a.parquet'), 'x');
    await utimes(dir, LONG_AGO, LONG_AGO);
    const listings = new FolderListings();
    expect(await names(dir, listings)).toEqual(['a.parquet']);
    await writeFile(path.join(dir, 'b.parquet'), 'x');
    await utimes(dir, LONG_AGO, LONG_AGO);
    expect(await names(dir, listings)).toEqual(['a.parquet']);
    // Without the listings, or once the time moves, the new file is there.
    expect((await listFiles(dir, 'hotspots')).map((f) => path.basename(f.path))).toEqual(['a.parquet', 'b.parquet']);
    await utimes(dir, new Date('2025-01-01T00:00:01Z'), new Date('2025-01-01T00:00:01Z'));
    expect(await names(dir, listings)).toEqual(['a.parquet', 'b.parquet']);
  });

  it('a partition folder added, or a file added by an operator, is seen at once', async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, 'date=2025-08-01'));
    await utimes(dir, LONG_AGO, LONG_AGO);
    const listings = new FolderListings();
    expect(await keys(dir, listings)).toEqual(['2025-08-01']);
    await mkdir(path.join(dir, 'date=2025-08-02'));
    expect(await keys(dir, listings)).toEqual(['2025-08-01', '2025-08-02']);
    const day = path.join(dir, 'date=2025-08-02');
    await utimes(day, LONG_AGO, LONG_AGO);
    expect(await names(day, listings)).toEqual([]);
    await writeFile(path.join(day, 'new.parquet'), 'x');
    expect(await names(day, listings)).toEqual(['new.parquet']);
  });

  it('a folder changed within the last seconds is not kept: a change in the same tick could not be seen', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'a.parquet'), 'x');
    const recent = new Date(Math.floor(Date.now() / 1000) * 1000);
    await utimes(dir, recent, recent);
    const listings = new FolderListings();
    expect(await names(dir, listings)).toEqual(['a.parquet']);
    await writeFile(path.join(dir, 'b.parquet'), 'x');
    await utimes(dir, recent, recent);
    expect(await names(dir, listings)).toEqual(['a.parquet', 'b.parquet']);
  });

  it('sizes and times of files are read on every listing (a file rewritten in place leaves its folder as it was)', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'a.parquet'), 'x');
    await utimes(dir, LONG_AGO, LONG_AGO);
    const listings = new FolderListings();
    expect((await listFiles(dir, 'hotspots', listings))[0]!.size).toBe(1);
    await writeFile(path.join(dir, 'a.parquet'), 'longer');
    await utimes(dir, LONG_AGO, LONG_AGO);
    expect((await listFiles(dir, 'hotspots', listings))[0]!.size).toBe(6);
  });
});
