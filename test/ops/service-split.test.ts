import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const OUTSIDE_THE_SERVICE = ['ops', 'demo', 'client', 'bench'];

/** Relative imports (static, bare and on demand) of every .ts file under `folder`, as paths from the repository root. */
async function importsUnder(folder: string): Promise<{ from: string; to: string }[]> {
  const entries = await readdir(path.join(ROOT, folder), { withFileTypes: true, recursive: true });
  const files = entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => path.join(e.parentPath, e.name));
  const imports: { from: string; to: string }[] = [];
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    for (const m of text.matchAll(/(?:from |import\(?\s*)'(\.[^']+)'/g)) {
      imports.push({ from: path.relative(ROOT, file), to: path.relative(ROOT, path.resolve(path.dirname(file), m[1]!)) });
    }
  }
  return imports;
}

describe('the commands live in ops/, the service in server/', () => {
  it('nothing under server/ imports ops/, demo/, client/ or bench/', async () => {
    const imports = await importsUnder('server');
    expect(imports.length).toBeGreaterThan(50);
    const upward = imports.filter((i) => OUTSIDE_THE_SERVICE.includes(i.to.split(path.sep)[0]!));
    expect(upward).toEqual([]);
  });
});
