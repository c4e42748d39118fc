import { rename, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { DatasetUnavailableError } from '../../../queries/errors.ts';
import { assertFilesUnchanged } from '../../../queries/files/identity.ts';
import { hashFooter } from '../../../queries/files/footer.ts';
import type { DataFile } from '../../../queries/files/data-file.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { writeBulkHotspots } from '../../helpers/parquet.ts';

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await tempDir();
  file = path.join(dir, 'a.parquet');
  await writeBulkHotspots(file, '2025-07-01', 1000, 1);
});

async function listed(p: string): Promise<DataFile> {
  const s = await stat(p);
  return { path: p, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
}

describe('assertFilesUnchanged', () => {
  it('passes for the file as it was listed and checked', async () => {
    const f = await listed(file);
    await expect(assertFilesUnchanged('hotspots', [f], new Map([[file, await hashFooter(f)]]))).resolves.toBeUndefined();
  });

  it('throws for a file replaced by rename, even with the same size and modification time', async () => {
    const f = await listed(file);
    const other = path.join(dir, '_b.parquet');
    await writeBulkHotspots(other, '2025-07-01', 1000, 1);
    await utimes(other, new Date(f.mtimeMs), new Date(f.mtimeMs));
    expect((await stat(other)).size).toBe(f.size);
    await rename(other, file);
    await expect(assertFilesUnchanged('hotspots', [f])).rejects.toBeInstanceOf(DatasetUnavailableError);
  });

  it('throws for a file rewritten in place whose footer differs, even with the listed size and time', async () => {
    const f = await listed(file);
    const hash = await hashFooter(f);
    const other = path.join(dir, '_b.parquet');
    await writeBulkHotspots(other, '2025-07-01', 1000, 1, 2);
    const { readFile } = await import('node:fs/promises');
    const bytes = await readFile(other);
    // Same length and time as listed, other content: only the footer tells.
    await writeFile(file, Buffer.concat([bytes, Buffer.alloc(Math.max(0, f.size - bytes.length))]).subarray(0, f.size));
    await utimes(file, new Date(f.mtimeMs), new Date(f.mtimeMs));
    await expect(assertFilesUnchanged('hotspots', [f], new Map([[file, hash]]))).rejects.toBeInstanceOf(DatasetUnavailableError);
  });

  it('reads the footer again only for a file whose status changed just before it was listed; its status tells for the others', async () => {
    const s = await stat(file);
    const f: DataFile = { path: file, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino, ctimeMs: s.ctimeMs };
    const wrong = new Map([[file, '0'.repeat(64)]]);
    // Listed a moment after its last change: the footer is read, and this one is not the hash given.
    await expect(assertFilesUnchanged('hotspots', [{ ...f, listedMs: s.ctimeMs + 100 }], wrong)).rejects.toBeInstanceOf(DatasetUnavailableError);
    // Listed long after it: the status is compared, the footer is not read.
    const settled = { ...f, listedMs: s.ctimeMs + 5_000 };
    await expect(assertFilesUnchanged('hotspots', [settled], wrong)).resolves.toBeUndefined();
    // A rewrite in place that keeps size, inode and modification time moves the status change time
    // (once the clock is past the tick of the last change).
    while (Date.now() <= s.ctimeMs + 20) await new Promise((r) => setTimeout(r, 5));
    const { readFile } = await import('node:fs/promises');
    await writeFile(file, await readFile(file));
    const now = await stat(file);
    expect([now.size, now.ino, now.ctimeMs === f.ctimeMs]).toEqual([f.size, f.ino, false]);
    await expect(assertFilesUnchanged('hotspots', [{ ...settled, mtimeMs: now.mtimeMs }], wrong)).rejects.toBeInstanceOf(DatasetUnavailableError);
    await expect(assertFilesUnchanged('hotspots', [{ ...settled, mtimeMs: now.mtimeMs, ctimeMs: now.ctimeMs }], wrong)).resolves.toBeUndefined();
  });

  it('rows from renderings: a file settled when listed is the version they hold, even replaced or gone since; one listed just after a change has its footer read again', async () => {
    const s = await stat(file);
    const f: DataFile = { path: file, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino, ctimeMs: s.ctimeMs };
    const hashes = new Map([[file, await hashFooter(f)]]);
    const settled = { ...f, listedMs: s.ctimeMs + 5_000 };
    const other = path.join(dir, '_b.parquet');
    await writeBulkHotspots(other, '2025-07-01', 1000, 1, 2);
    await rename(other, file);
    await expect(assertFilesUnchanged('hotspots', [settled], hashes)).rejects.toBeInstanceOf(DatasetUnavailableError);
    await expect(assertFilesUnchanged('hotspots', [settled], hashes, true)).resolves.toBeUndefined();
    // Listed a moment after its last change: looked at again in full (here the inode already tells it is another file).
    await expect(assertFilesUnchanged('hotspots', [{ ...f, listedMs: s.ctimeMs + 100 }], hashes, true)).rejects.toBeInstanceOf(DatasetUnavailableError);
    await rename(file, path.join(dir, '_gone.parquet'));
    await expect(assertFilesUnchanged('hotspots', [settled], hashes, true)).resolves.toBeUndefined();
    // Without a checked footer there is no rendering to stand for it: the status is compared.
    await expect(assertFilesUnchanged('hotspots', [settled], new Map(), true)).rejects.toBeInstanceOf(DatasetUnavailableError);
  });

  it('throws for a file that vanished', async () => {
    const f = await listed(file);
    await rename(file, path.join(dir, '_gone.parquet'));
    await expect(assertFilesUnchanged('hotspots', [f])).rejects.toBeInstanceOf(DatasetUnavailableError);
  });
});
