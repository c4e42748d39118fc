import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DATASETS } from '../../../datasets/index.ts';
import { parseInstant, WINDOW_PATTERN } from '../../../queries/instant.ts';
import { datasetQuerySchema } from '../../../server/params/query-params.ts';

const hotspots = DATASETS.find((d) => d.name === 'hotspots')!;

const ROOT = path.resolve(import.meta.dirname, '../../..');

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, dir), { withFileTypes: true });
  const nested = await Promise.all(entries.map((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : [path.join(dir, e.name)])));
  return nested.flat().filter((f) => f.endsWith('.ts'));
}

describe('one regex per syntax, one reader of parameter errors', () => {
  it('the window syntax the OpenAPI document states for from/to is the pattern the parser reads', () => {
    const schema = z.toJSONSchema(datasetQuerySchema(hotspots), { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, { pattern?: string }> };
    expect(schema.properties.from?.pattern).toBe(WINDOW_PATTERN.source);
    expect(schema.properties.to?.pattern).toBe(WINDOW_PATTERN.source);
    for (const text of ['2025-08-01', '2025-08-01T10:00', '2025-08-01T10:00:00.000001+02:00']) expect([WINDOW_PATTERN.test(text), parseInstant(text) !== null]).toEqual([true, true]);
  });

  it('the request parameters zod rejects become errors in one place (parameterErrors), for every endpoint', async () => {
    const readers = [];
    for (const file of await sourceFiles('server')) {
      // The environment is not a request: config.ts reports its own issues.
      if (file !== 'server/config.ts' && /\.issues\b/.test(await readFile(path.join(ROOT, file), 'utf8'))) readers.push(file);
    }
    expect(readers).toEqual(['server/params/query-params.ts']);
  });
});
