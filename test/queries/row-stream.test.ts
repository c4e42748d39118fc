import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { StreamIncompleteError } from '../../queries/errors.ts';
import { streamRows } from '../../queries/row-stream.ts';

const ROWS = 2_000_000;
// Rows shaped like the WKB path's (head, wkb, tail); a null geometry encodes as `null`.
const group = { sql: `SELECT '{"n":' || i || ',"g":' AS head, CAST(NULL AS BLOB) AS wkb, '}' AS tail FROM range(${ROWS}) t(i) ORDER BY i DESC`, params: [] };

describe('streamRows', () => {
  it('throws when an interrupted stream ends early, which the client library reports as a normal end', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    let chunks = 0;
    const run = async () => {
      for await (const _ of streamRows(c, [group], ROWS, new AbortController().signal)) {
        if (++chunks === 2) c.interrupt();
      }
    };
    await expect(run()).rejects.toBeInstanceOf(StreamIncompleteError);
    expect(chunks).toBeLessThan(ROWS / 2048);
    c.closeSync();
    db.closeSync();
  });

  it('stops before the next group once the request is aborted', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const small = { sql: `SELECT '{"g":' AS head, CAST(NULL AS BLOB) AS wkb, '}' AS tail FROM range(10) t(i)`, params: [] };
    const ac = new AbortController();
    const run = async () => {
      for await (const _ of streamRows(c, [small, small], 20, ac.signal)) ac.abort(new Error('gone'));
    };
    await expect(run()).rejects.toThrow('gone');
    c.closeSync();
    db.closeSync();
  });
});
