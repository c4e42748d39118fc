import { mkdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { CHAIN_FILE, readChain } from '../../../queries/files/chain.ts';
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

describe('FolderListings.ofFile: a small file read again whenever its status changes', () => {
  const counted = (listings: FolderListings, file: string) => {
    let reads = 0;
    const read = () => listings.ofFile(file, 'text', async () => (reads++, readFile(file, 'utf8')));
    return { read, reads: () => reads };
  };

  it('a settled file is read once; rewritten in place (same size, same times set back) or replaced by a rename, it is read again', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'status.json');
    await writeFile(file, 'one');
    await utimes(file, LONG_AGO, LONG_AGO);
    const c = counted(new FolderListings(0), file);
    expect([await c.read(), await c.read(), c.reads()]).toEqual(['one', 'one', 1]);
    // Same length, modification time set back: only the status change time tells (rewritten until
    // it has moved: within one tick of the kernel's clock it would not, which is why a file
    // changed within the last seconds is never kept).
    const first = await stat(file, { bigint: true });
    do {
      await writeFile(file, 'two');
      await utimes(file, LONG_AGO, LONG_AGO);
    } while ((await stat(file, { bigint: true })).ctimeNs === first.ctimeNs);
    expect([await c.read(), c.reads()]).toEqual(['two', 2]);
    await writeFile(path.join(dir, '.next'), 'six');
    await rename(path.join(dir, '.next'), file);
    expect([await c.read(), c.reads()]).toEqual(['six', 3]);
    await rm(file);
    await expect(c.read()).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a file changed within the last seconds is read on every request (a change in the same tick could not be seen)', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'status.json');
    await writeFile(file, 'one');
    const c = counted(new FolderListings(), file);
    await c.read();
    await c.read();
    expect(c.reads()).toBe(2);
  });

  it('readChain with listings: the chain turned unavailable, or malformed, is seen on the next request', async () => {
    const dir = await tempDir();
    const file = path.join(dir, CHAIN_FILE);
    const listings = new FolderListings(0);
    await writeFile(file, JSON.stringify({ lastRunUtc: '2025-08-01T00:00:00Z', lastSuccessUtc: '2025-08-01T00:00:00Z' }));
    const now = Date.parse('2025-08-01T01:00:00Z');
    expect(await readChain(dir, now, listings)).toMatchObject({ available: true, observation: { chainRan: true, ageSeconds: 3600 } });
    expect(await readChain(dir, now + 1000, listings)).toMatchObject({ available: true, observation: { ageSeconds: 3601 } });
    await writeFile(file, JSON.stringify({ available: false }));
    expect(await readChain(dir, now, listings)).toEqual({ available: false, reason: 'feeding data chain reports unavailable' });
    await writeFile(file, '{"lastRunUtc": 1');
    expect(await readChain(dir, now, listings)).toEqual({ available: false, reason: 'chain status malformed' });
    await rm(file);
    expect(await readChain(dir, now, listings)).toMatchObject({ available: true, observation: { chainRan: false } });
    await mkdir(file);
    expect(await readChain(dir, now, listings)).toEqual({ available: false, reason: 'chain status unreadable' });
  });
});
