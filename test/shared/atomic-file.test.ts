import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../shared/atomic-file.ts';
import { tempDir } from '../helpers/fixtures.ts';

describe('writeFileAtomic', () => {
  it('replaces the file whole, with the mode asked for, and leaves no temporary file', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'keys.json');
    await writeFile(file, 'old');
    await writeFileAtomic(path.join(dir, 'new.json'), 'new', 0o600);
    await writeFileAtomic(file, 'replaced');
    expect(await readFile(file, 'utf8')).toBe('replaced');
    expect((await stat(path.join(dir, 'new.json'))).mode & 0o777).toBe(0o600);
    expect((await readdir(dir)).sort()).toEqual(['keys.json', 'new.json']);
  });

  it('removes its temporary file when the rename fails', async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, 'taken', 'inside'), { recursive: true });
    await expect(writeFileAtomic(path.join(dir, 'taken'), 'x')).rejects.toThrow();
    expect(await readdir(dir)).toEqual(['taken']);
  });
});
