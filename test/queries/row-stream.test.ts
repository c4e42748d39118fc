import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { StreamIncompleteError } from '../../queries/errors.ts';
import { streamRows } from '../../queries/row-stream.ts';

const ROWS = 2_000_000;
const group = { sql: `SELECT '{"n":' || i || '}' AS feature FROM range(${ROWS}) t(i) ORDER BY i DESC`, params: [] };

describe('streamRows', () => {
  it('throws when an interrupted stream ends early, which the client library reports as a normal end', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    let chunks = 0;
    const run = async () => {
      for await (const _ of streamRows(c, [group], 'geojson', ROWS, new AbortController().signal)) {
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
    const small = { sql: `SELECT '{}' AS feature FROM range(10) t(i)`, params: [] };
    const ac = new AbortController();
    const run = async () => {
      for await (const _ of streamRows(c, [small, small], 'geojson', 20, ac.signal)) ac.abort(new Error('gone'));
    };
    await expect(run()).rejects.toThrow('gone');
    c.closeSync();
    db.closeSync();
  });
});
