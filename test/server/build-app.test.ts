import { readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../server/app.ts';
import { loadConfig } from '../../server/config.ts';
import { tempDir } from '../helpers/fixtures.ts';

/** Threads of this process (vitest runs each file in a process of its own): DuckDB's workers among them. */
const threads = () => readdirSync('/proc/self/task').length;

describe('buildApp leaves nothing open when it fails', () => {
  it('a key registry that does not load leaves no DuckDB behind (its worker threads included)', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'keys.json'), '{"keys": [');
    const config = loadConfig({ DATA_DIR: dir, TEMP_DIR: path.join(dir, '.tmp'), KEYS_FILE: path.join(dir, 'keys.json'), DUCKDB_THREADS: '4', LOG_LEVEL: 'silent' });
    const fail = () => expect(buildApp(config)).rejects.toThrow(/key registry .* is not valid/);
    // The first failure starts whatever threads the process starts once (Node's I/O pool).
    await fail();
    const before = threads();
    for (let i = 0; i < 3; i++) await fail();
    expect(threads()).toBe(before);
  });
});
