import { stat } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { footerKeyValues } from '../../../queries/files/footer-kv.ts';
import { readFooter } from '../../../queries/files/footer.ts';
import { tempDir } from '../../helpers/fixtures.ts';

async function writeWith(kv: string): Promise<Map<string, string>> {
  const file = path.join(await tempDir('fire-api-kv-'), 'f.parquet');
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  try {
    // Several row groups, statistics, a geometry column (GeoParquet 'geo' entry) and booleans: the fields the walker must skip.
    await c.run(`COPY (SELECT i, i % 2 = 0 AS even, 'v' || i AS s, 'POINT (1 2)'::GEOMETRY AS g FROM range(5000) t(i)) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 1000${kv})`);
  } finally {
    c.closeSync();
    instance.closeSync();
  }
  const s = await stat(file);
  return footerKeyValues(await readFooter({ path: file, size: s.size, mtimeMs: s.mtimeMs }));
}

describe('footerKeyValues (the Parquet footer key-value metadata, read without DuckDB)', () => {
  it('returns every entry DuckDB wrote, with quotes and non-ASCII text intact, past row groups and statistics', async () => {
    const kv = await writeWith(`, KV_METADATA {'fire_api.supersedes': '[{"name":"a.parquet","footerSha256":"ab"}]', 'note': 'Pedrógão'}`);
    expect(kv.get('fire_api.supersedes')).toBe('[{"name":"a.parquet","footerSha256":"ab"}]');
    expect(kv.get('note')).toBe('Pedrógão');
    expect(JSON.parse(kv.get('geo')!)).toMatchObject({ primary_column: 'g' });
  });

  it('finds no supersedes entry in a file written without one', async () => {
    expect((await writeWith('')).has('fire_api.supersedes')).toBe(false);
  });

  it('refuses a footer cut short instead of reading past it', () => {
    expect(() => footerKeyValues(new Uint8Array([0x15, 0x02]))).toThrow(/ends early/);
  });
});

describe('footerKeyValues on a forged footer', () => {
  it('stops at the end of the bytes when a map claims a huge number of boolean entries', () => {
    // Field 9 of FileMetaData as a map of 2^40 (bool, bool) entries and nothing after it.
    const forged = new Uint8Array([0x9b, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x11]);
    expect(() => footerKeyValues(forged)).toThrow(/ends early/);
  });
});
