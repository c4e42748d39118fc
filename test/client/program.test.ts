import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fireApi } from '../helpers/cli.ts';

const CLIENT_DIR = path.resolve(import.meta.dirname, '../../client');

describe('the client is a program of its own', () => {
  it('imports nothing from the service (server/, queries/, datasets/), only shared/ and itself', async () => {
    const files = (await readdir(CLIENT_DIR)).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(5);
    for (const f of files) {
      const text = await readFile(path.join(CLIENT_DIR, f), 'utf8');
      const imports = [...text.matchAll(/from '(\.[^']+)'/g)].map((m) => m[1]!);
      for (const i of imports) expect(`${f}: ${i}`).toMatch(/: \.\/|: \.\.\/shared\//);
    }
  });

  it('fire-api extract and verify reach the client through the command, with its usage and exit codes', async () => {
    const help = await fireApi(['extract', '--help']);
    expect([help.code, help.stdout]).toEqual([0, expect.stringMatching(/^Usage: fire-api extract <dataset>/)]);
    const bad = await fireApi(['verify']);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/^fire-api verify: /)]);
  });
});
