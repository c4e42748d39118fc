import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NO_ANSWER, readStatusesFor, remoteFileSystem, StatusReader } from '../../../queries/files/status.ts';
import { tempDir } from '../../helpers/fixtures.ts';

const FIELDS = ['ino', 'size', 'mtimeMs', 'ctimeMs', 'mode'] as const;
const NS_FIELDS = ['ino', 'size', 'mtimeNs', 'ctimeNs', 'mode'] as const;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function someFiles(n: number): Promise<string[]> {
  const dir = await tempDir();
  const files = Array.from({ length: n }, (_, i) => path.join(dir, `f${i}.parquet`));
  await Promise.all(files.map((f, i) => writeFile(f, 'x'.repeat(i))));
  return files;
}

/** What `fs/promises` says and what the reader says, both ways it reads, for the same paths. */
async function agrees(reader: StatusReader, paths: readonly string[]): Promise<void> {
  for (const p of paths) {
    const [plain, plainNs] = [await stat(p), await stat(p, { bigint: true })];
    const [got, gotNs] = [await reader.of(p), await reader.nsOf(p)];
    for (const k of FIELDS) expect(got[k]).toBe(plain[k]);
    for (const k of NS_FIELDS) expect(gotNs[k]).toBe(plainNs[k]);
    expect(got.isDirectory()).toBe(plain.isDirectory());
  }
}

describe('StatusReader: statuses read inline while cheap, through the thread pool otherwise', () => {
  it('reads inline the status fs/promises gives, for files and folders; a missing path rejects with ENOENT', async () => {
    const files = await someFiles(3);
    const folder = path.join(path.dirname(files[0]!), 'sub');
    await mkdir(folder);
    const reader = new StatusReader(1e9, 1e9);
    await agrees(reader, [...files, folder]);
    expect(reader.reads).toEqual({ inline: 8, pooled: 0 });
    await expect(reader.of(path.join(folder, 'absent'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(reader.nsOf(path.join(folder, 'absent'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('after a slow inline read, reads go to the thread pool (the same statuses) and one is tried inline again later', async () => {
    const files = await someFiles(2);
    // Every inline read counts as slow.
    const reader = new StatusReader(1e9, -1);
    await reader.of(files[0]!);
    expect(reader.reads).toEqual({ inline: 1, pooled: 0 });
    expect(reader.slow).toBe(true);
    await agrees(reader, files);
    expect(reader.reads).toEqual({ inline: 1, pooled: 4 });
    await expect(reader.of(path.join(files[0]!, 'absent'))).rejects.toMatchObject({ code: 'ENOTDIR' });
    await expect(reader.of(path.join(path.dirname(files[0]!), 'absent'))).rejects.toMatchObject({ code: 'ENOENT' });
    // 255 in the pool after the slow one, then one inline again.
    for (let i = reader.reads.pooled; i < 255; i++) await reader.of(files[1]!);
    expect(reader.reads).toEqual({ inline: 1, pooled: 255 });
    await reader.of(files[1]!);
    expect(reader.reads).toEqual({ inline: 2, pooled: 255 });
  });

  it('one turn of the event loop spends at most its budget inline, the rest through the pool; the next turn inline again', async () => {
    const files = await someFiles(200);
    // A budget of 1 µs: 200 inline reads would take far longer.
    const reader = new StatusReader(1, 1e9);
    const statuses = await Promise.all(files.map((f) => reader.of(f)));
    expect(statuses.map((s) => s.size)).toEqual(files.map((_, i) => i));
    expect(reader.reads.inline).toBeGreaterThanOrEqual(1);
    expect(reader.reads.pooled).toBeGreaterThanOrEqual(1);
    expect(reader.reads.inline + reader.reads.pooled).toBe(200);
    await nextTurn();
    const inline = reader.reads.inline;
    await reader.of(files[0]!);
    expect(reader.reads.inline).toBe(inline + 1);
    // No budget at all: every read through the pool.
    const none = new StatusReader(0, 1e9);
    await agrees(none, files.slice(0, 2));
    expect(none.reads).toEqual({ inline: 0, pooled: 4 });
  });
});

describe('StatusReader: a folder on a network file system is never read inline', () => {
  it('network and user-space file systems by their statfs type (as a signed or unsigned 32-bit number); local ones are not', () => {
    expect(remoteFileSystem(0x6969)).toBe('NFS');
    expect(remoteFileSystem(0xff534d42)).toBe('CIFS');
    expect(remoteFileSystem(0xff534d42 | 0)).toBe('CIFS');
    expect(remoteFileSystem(0xfe534d42)).toBe('SMB2');
    expect(remoteFileSystem(0x65735546)).toBe('FUSE');
    expect(remoteFileSystem(0x01021997)).toBe('9P');
    // ext4, XFS, Btrfs, tmpfs, overlayfs, ZFS
    for (const local of [0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1]) expect(remoteFileSystem(local)).toBeNull();
  });

  it('every status under a folder marked goes through the thread pool, however cheap; paths elsewhere, or beside it with the same prefix, stay inline', async () => {
    const files = await someFiles(2);
    const dir = path.dirname(files[0]!);
    const beside = `${dir}-beside`;
    await mkdir(beside);
    const reader = new StatusReader(1e9, 1e9);
    reader.poolUnder(dir);
    await agrees(reader, [...files, dir]);
    expect(reader.reads).toEqual({ inline: 0, pooled: 6 });
    await expect(reader.of(path.join(dir, 'absent'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(reader.reads).toEqual({ inline: 0, pooled: 7 });
    await agrees(reader, [beside]);
    expect(reader.reads).toEqual({ inline: 2, pooled: 7 });
  });

  it('a folder on a local file system keeps inline reads; the file system is looked at with statfs', async () => {
    const files = await someFiles(1);
    const reader = new StatusReader(1e9, 1e9);
    expect(await readStatusesFor(path.dirname(files[0]!), reader)).toBeNull();
    await agrees(reader, files);
    expect(reader.reads).toEqual({ inline: 2, pooled: 0 });
    await expect(readStatusesFor(path.join(path.dirname(files[0]!), 'absent'), reader)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a file system that gives no answer (a mount whose server has gone) is taken for a network one: the start does not hang on it', async () => {
    const files = await someFiles(1);
    const reader = new StatusReader(1e9, 1e9);
    const never = () => new Promise<{ type: number }>(() => undefined);
    expect(await readStatusesFor(path.dirname(files[0]!), reader, never, 20)).toBe(NO_ANSWER);
    await agrees(reader, files);
    expect(reader.reads).toEqual({ inline: 0, pooled: 2 });
  });
});
