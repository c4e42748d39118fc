import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractTempDir } from '../../../queries/engine/temp-files.ts';
import { tempDir } from '../../helpers/fixtures.ts';

describe('extractTempDir', () => {
  it('sweeps the folders of processes that no longer run and keeps live ones', async () => {
    const root = await tempDir();
    // PID 1 always runs; 2^22 + 7 is above Linux's pid_max default, so no process has it.
    for (const pid of [1, 4_194_311]) {
      await mkdir(path.join(root, `extracts-${pid}`));
      await writeFile(path.join(root, `extracts-${pid}`, 'extract-x-0.csv'), 'left over');
    }
    await writeFile(path.join(root, 'unrelated.txt'), 'keep');
    const own = await extractTempDir(root);
    expect(own).toBe(path.join(root, `extracts-${process.pid}`));
    expect((await readdir(root)).sort()).toEqual([`extracts-${process.pid}`, 'extracts-1', 'unrelated.txt'].sort());
  });
});
