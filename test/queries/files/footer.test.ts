import { createHash, randomBytes } from 'node:crypto';
import { copyFile, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { hotspots } from '../../../datasets/hotspots.ts';
import { UnreadableFileError } from '../../../queries/errors.ts';
import { fingerprint, hashFooter, sameFooter } from '../../../queries/files/footer.ts';
import type { DataFile } from '../../../queries/files/data-file.ts';
import { hotspot, tempDir } from '../../helpers/fixtures.ts';
import { writeParquet } from '../../helpers/parquet.ts';

let dir: string;
const file = async (name: string): Promise<DataFile> => {
  const p = path.join(dir, name);
  const s = await stat(p);
  return { path: p, size: s.size, mtimeMs: s.mtimeMs };
};

beforeAll(async () => {
  dir = await tempDir();
  await writeParquet(path.join(dir, 'a.parquet'), hotspots, [hotspot('a1', '2025-08-01T10:00:00Z'), hotspot('a2', '2025-08-01T11:00:00Z')]);
  await writeParquet(path.join(dir, 'b.parquet'), hotspots, [hotspot('a1', '2025-08-01T10:00:00Z'), hotspot('a2', '2025-08-01T11:00:01Z')]);
  await copyFile(path.join(dir, 'a.parquet'), path.join(dir, 'renamed-copy.parquet'));
  const bytes = await readFile(path.join(dir, 'a.parquet'));
  await writeFile(path.join(dir, 'truncated.parquet'), bytes.subarray(0, bytes.length - 100));
  await writeFile(path.join(dir, 'half.parquet'), bytes.subarray(0, bytes.length >> 1));
  await writeFile(path.join(dir, 'headless.parquet'), Buffer.concat([Buffer.from('XXXX'), bytes.subarray(4)]));
  await writeFile(path.join(dir, 'text.parquet'), 'id,product\na1,VIIRS_SNPP_NRT\n'.repeat(10));
  await writeFile(path.join(dir, 'tiny.parquet'), 'PAR1PAR1');
  const badLength = Buffer.concat([Buffer.from('PAR1'), Buffer.alloc(20), Buffer.from([0xff, 0xff, 0, 0]), Buffer.from('PAR1')]);
  await writeFile(path.join(dir, 'bad-length.parquet'), badLength);
  await writeFile(path.join(dir, 'zero-length.parquet'), Buffer.concat([Buffer.from('PAR1'), Buffer.alloc(20), Buffer.from('PAR1')]));
});

describe('hashFooter', () => {
  it('hashes a copy under another name and time the same', async () => {
    const a = await hashFooter(await file('a.parquet'));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(await hashFooter(await file('renamed-copy.parquet'))).toBe(a);
  });

  it('hashes different content (one timestamp one second later) differently', async () => {
    expect(await hashFooter(await file('b.parquet'))).not.toBe(await hashFooter(await file('a.parquet')));
  });

  it.each(['truncated.parquet', 'half.parquet', 'headless.parquet', 'text.parquet', 'tiny.parquet', 'bad-length.parquet', 'zero-length.parquet'])(
    'throws UnreadableFileError for %s',
    async (name) => {
      await expect(hashFooter(await file(name))).rejects.toBeInstanceOf(UnreadableFileError);
    },
  );

  it('throws UnreadableFileError when the listed size is stale (file grew after listing)', async () => {
    const f = await file('a.parquet');
    await expect(hashFooter({ ...f, size: f.size - 1 })).rejects.toBeInstanceOf(UnreadableFileError);
  });
});

/** A file framed as Parquet around `footer` (its bytes are only hashed, never parsed). */
async function framed(name: string, footer: Buffer): Promise<DataFile> {
  const length = Buffer.alloc(4);
  length.writeUInt32LE(footer.length);
  await writeFile(path.join(dir, name), Buffer.concat([Buffer.from('PAR1'), randomBytes(100), footer, length, Buffer.from('PAR1')]));
  return file(name);
}
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('sameFooter', () => {
  it.each([10, 16_000, 16_376, 16_377, 40_000])('agrees with hashFooter for a footer of %i bytes, however many reads it takes', async (bytes) => {
    const footer = randomBytes(bytes);
    const f = await framed(`footer-${bytes}.parquet`, footer);
    expect(await hashFooter(f)).toBe(sha256(footer));
    expect(await sameFooter(f, sha256(footer))).toBe(true);
    expect(await sameFooter(f, sha256(randomBytes(bytes)))).toBe(false);
  });

  it('is false for a file not as listed, unreadable or gone, never a throw', async () => {
    const f = await file('a.parquet');
    const hash = await hashFooter(f);
    expect(await sameFooter(f, hash)).toBe(true);
    expect(await sameFooter({ ...f, size: f.size - 1 }, hash)).toBe(false);
    expect(await sameFooter({ ...f, mtimeMs: f.mtimeMs + 1 }, hash)).toBe(false);
    expect(await sameFooter({ ...f, ino: (await stat(f.path)).ino + 1 }, hash)).toBe(false);
    expect(await sameFooter(await file('truncated.parquet'), hash)).toBe(false);
    expect(await sameFooter({ ...f, path: path.join(dir, 'gone.parquet') }, hash)).toBe(false);
  });
});

describe('fingerprint', () => {
  const [h1, h2, h3] = ['1'.repeat(64), '2'.repeat(64), '3'.repeat(64)];

  it('does not depend on the order of the footer hashes', () => {
    expect(fingerprint([h1!, h2!, h3!])).toBe(fingerprint([h3!, h1!, h2!]));
  });

  it('is a sha256: version string', () => {
    expect(fingerprint([h1!])).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('changes when a file is added, removed or replaced', () => {
    const base = fingerprint([h1!, h2!]);
    expect(fingerprint([h1!, h2!, h3!])).not.toBe(base);
    expect(fingerprint([h1!])).not.toBe(base);
    expect(fingerprint([h1!, h3!])).not.toBe(base);
    expect(fingerprint([])).not.toBe(base);
  });

  it('does not reorder the array it is given', () => {
    const hashes = [h3!, h1!];
    fingerprint(hashes);
    expect(hashes).toEqual([h3, h1]);
  });
});
