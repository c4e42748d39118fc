import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fireApi } from '../helpers/cli.ts';
import { tempDir } from '../helpers/fixtures.ts';

const CLIENT_DIR = path.resolve(import.meta.dirname, '../../client');

describe('the client is a program of its own', () => {
  it('imports nothing from the service (server/, queries/, datasets/), only shared/ and itself', async () => {
    const files = (await readdir(CLIENT_DIR, { recursive: true })).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(5);
    const shared = path.resolve(CLIENT_DIR, '../shared');
    const outside: string[] = [];
    for (const f of files) {
      const text = await readFile(path.join(CLIENT_DIR, f), 'utf8');
      for (const [, i] of text.matchAll(/from '(\.[^']+)'/g)) {
        const target = path.resolve(CLIENT_DIR, path.dirname(f), i!);
        if (![CLIENT_DIR, shared].some((room) => target.startsWith(`${room}${path.sep}`))) outside.push(`${f}: ${i}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it('fire-api extract and verify reach the client through the command, with its usage and exit codes', async () => {
    const help = await fireApi(['extract', '--help']);
    expect([help.code, help.stdout]).toEqual([0, expect.stringMatching(/^Usage: fire-api extract <dataset>/)]);
    const bad = await fireApi(['verify']);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/^fire-api verify: /)]);
  });

  it('a verify that fails on a fault of its own exits 3 (could not verify), never 1 (something changed)', async () => {
    const sha = '0'.repeat(64);
    const page = { index: 0, request: { from: '2025-08-01T00:00:00Z', to: '2025-08-02T00:00:00Z' }, window: null, truncated: false, nextFrom: null, dataVersion: 'v', returned: 0, firstRow: 0, rowsSha256: sha, fetchedAtUtc: '2025-08-03T00:00:00Z' };
    // A manifest the schema accepts whose service is not an address: building the request's URL throws.
    const manifest = {
      manifestVersion: 1, tool: { name: 'fire-api', version: '1' }, service: 'not an address', dataset: 'hotspots', format: 'csv', window: page.request,
      parameters: {}, queryInEffect: null, csvHeader: null, rowLimit: null, startedAtUtc: page.fetchedAtUtc, completedAtUtc: page.fetchedAtUtc,
      hashes: { rowsSha256: sha, fileSha256: sha }, pages: [page], rows: 0, file: { name: 'x.csv', bytes: 0, sha256: sha },
    };
    const file = path.join(await tempDir(), 'x.csv.manifest.json');
    await writeFile(file, JSON.stringify(manifest));
    const r = await fireApi(['verify', file], { FIRE_API_KEY: 'frk_test_test' });
    expect([r.code, r.stderr]).toEqual([3, expect.stringMatching(/^fire-api: TypeError: Invalid URL/)]);
  });
});
