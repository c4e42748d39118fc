import { mkdtemp, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamCopies, type CopyPlan } from '../../queries/copy-stream.ts';
import { StreamIncompleteError } from '../../queries/errors.ts';

let db: DuckDBInstance;
let c: DuckDBConnection;
let tempDir: string;
beforeAll(async () => {
  db = await DuckDBInstance.create(':memory:');
  c = await db.connect();
  tempDir = await mkdtemp(path.join(os.tmpdir(), 'copy-stream-'));
});
afterAll(() => {
  c.closeSync();
  db.closeSync();
});

const plan = (rowsPerGroup: number[], over: Partial<CopyPlan> = {}): CopyPlan => ({
  connections: [c],
  tempDir,
  groups: rowsPerGroup.length,
  expected: rowsPerGroup.reduce((a, b) => a + b, 0),
  skipFirstBytes: 0,
  signal: new AbortController().signal,
  onCopiesDone: () => undefined,
  compile: (i, target) => ({ sql: `COPY (SELECT ${i} AS g, i FROM range(${rowsPerGroup[i]}) t(i) ORDER BY i) TO '${target}' (FORMAT csv, HEADER false)`, params: [] }),
  ...over,
});

async function collect(p: CopyPlan): Promise<string> {
  let text = '';
  for await (const chunk of streamCopies(p)) text += chunk.toString();
  return text;
}

describe('streamCopies', () => {
  it('sends the groups in order and removes their files', async () => {
    const text = await collect(plan([3, 2]));
    expect(text).toBe('0,0\n0,1\n0,2\n1,0\n1,1\n');
    expect(await readdir(tempDir)).toEqual([]);
  });

  it('throws when COPY wrote fewer rows than promised', async () => {
    await expect(collect({ ...plan([3, 2]), expected: 6 })).rejects.toBeInstanceOf(StreamIncompleteError);
    expect(await readdir(tempDir)).toEqual([]);
  });

  it('never interrupts a connection once its COPYs are done: it may already serve another request', async () => {
    let handedOver: Promise<unknown> | null = null;
    const p = plan([5000], {
      onCopiesDone: () => {
        handedOver = c.runAndReadAll('SELECT count(*) FROM range(300000000)');
      },
    });
    const gen = streamCopies(p);
    await gen.next();
    await gen.return(undefined);
    await expect(handedOver).resolves.toBeDefined();
  });
});
