import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { encodeFeatureChunk } from '../../../queries/encode/encode-chunk.ts';
import { writeEncodedRows } from '../../../queries/extract/row-stream.ts';

const ROWS = 2_000_000;
// Rows shaped like the WKB path's (head, wkb, tail); a null geometry encodes as `null`.
const group = { sql: `SELECT '{"n":' || i || ',"g":' AS head, CAST(NULL AS BLOB) AS wkb, '}' AS tail FROM range(${ROWS}) t(i) ORDER BY i DESC`, params: [] };

describe('writeEncodedRows', () => {
  it('reports the rows really written when an interrupted stream ends early, which the client library reports as a normal end', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const target = path.join(await mkdtemp(path.join(os.tmpdir(), 'row-stream-')), 'g.json');
    const pending = writeEncodedRows(c, group, encodeFeatureChunk, target);
    setTimeout(() => c.interrupt(), 50);
    const written = await pending.catch(() => 0);
    expect(written).toBeLessThan(ROWS);
    const text = await readFile(target, 'utf8');
    expect(text === '' ? 0 : text.split(',{').length).toBe(written);
    c.closeSync();
    db.closeSync();
  });

  it('writes every feature with its separator first, so the sender drops one byte from the first group', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const target = path.join(await mkdtemp(path.join(os.tmpdir(), 'row-stream-')), 'g.json');
    const small = { sql: `SELECT '{"g":' || i || ',"geometry":' AS head, CAST(NULL AS BLOB) AS wkb, '}' AS tail FROM range(3) t(i) ORDER BY i`, params: [] };
    expect(await writeEncodedRows(c, small, encodeFeatureChunk, target)).toBe(3);
    expect(await readFile(target, 'utf8')).toBe(',{"g":0,"geometry":null},{"g":1,"geometry":null},{"g":2,"geometry":null}');
    c.closeSync();
    db.closeSync();
  });
});
