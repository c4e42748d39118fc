import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SETTING_NAMES } from '../../server/config.ts';
import { DATA_VARY } from '../../server/http/media-types.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFile(path.join(ROOT, file), 'utf8');

describe('the documents say what the code does', () => {
  it('docs/configuration.md has a row for every setting server/config.ts reads', async () => {
    const doc = await read('docs/configuration.md');
    const environment = doc.slice(doc.indexOf('## Configuration (environment)'), doc.indexOf('\n## ', doc.indexOf('## Configuration (environment)') + 1));
    const rows = environment.split('\n').filter((l) => l.startsWith('| `'));
    const documented = new Set(rows.flatMap((row) => [...(row.split(' | ')[0] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!)));
    expect(SETTING_NAMES.length).toBeGreaterThan(30);
    expect(SETTING_NAMES.filter((name) => !documented.has(name))).toEqual([]);
  });

  it('the README names the Vary header data responses carry', async () => {
    expect(await read('README.md')).toContain(`\`Vary: ${DATA_VARY}\``);
  });
});
