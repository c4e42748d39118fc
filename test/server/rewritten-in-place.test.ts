import { open, readFile, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { hotspots } from '../../datasets/hotspots.ts';
import { hotspot, tempDir } from '../helpers/fixtures.ts';
import { writeParquet } from '../helpers/parquet.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

/** A whole second, as copying tools keep it. */
const SECOND = 1_754_000_000;

/** `file`'s bytes replaced by `other`'s in place (same inode), its modification time set back. */
async function rewriteInPlace(file: string, other: string): Promise<void> {
  const handle = await open(file, 'r+');
  await handle.write(await readFile(other), 0);
  await handle.close();
  await utimes(file, SECOND, SECOND);
}

it('a file rewritten in place with its size and modification time kept is checked again and served as it now is', async () => {
  const dir = await tempDir();
  const file = path.join(dir, 'hotspots/date=2025-08-01/a.parquet');
  const other = path.join(dir, '_other/a.parquet');
  await writeParquet(file, hotspots, [hotspot('a1', '2025-08-01T10:00:00Z', { frp: 10.5 })]);
  await writeParquet(other, hotspots, [hotspot('a1', '2025-08-01T10:00:00Z', { frp: 20.5 })]);
  await utimes(file, SECOND, SECOND);
  const before = await stat(file);
  expect((await stat(other)).size).toBe(before.size);
  server = await startServer(dir);
  const q = '/api/v1/hotspots?from=2025-08-01&to=2025-08-02&format=csv';
  const first = await server.get(q);
  expect(first.status).toBe(200);
  expect(await first.text()).toContain(',10.5,');
  await rewriteInPlace(file, other);
  const after = await stat(file);
  expect([after.ino, after.size, after.mtimeMs]).toEqual([before.ino, before.size, before.mtimeMs]);
  // Twice: neither the first request after the change nor any later one is refused for it.
  for (const _ of [1, 2]) {
    const again = await server.get(q);
    expect(again.status).toBe(200);
    expect(await again.text()).toContain(',20.5,');
    expect(again.headers.get('x-data-version')).not.toBe(first.headers.get('x-data-version'));
  }
});
