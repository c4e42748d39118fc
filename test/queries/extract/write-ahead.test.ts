import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyInto } from '../../../queries/encode/copy-stream.ts';
import { Engine } from '../../../queries/engine/engine.ts';
import { StreamIncompleteError } from '../../../queries/errors.ts';
import { streamWrittenAhead, type WriteAheadPlan } from '../../../queries/extract/write-ahead.ts';
import { tempDir as makeTempDir } from '../../helpers/fixtures.ts';

let engine: Engine;
let tempDir: string;
beforeAll(async () => {
  const root = await makeTempDir();
  tempDir = path.join(root, 'tmp');
  engine = await Engine.create({ dataDir: path.join(root, 'data'), tempDir, threads: 1, connections: 3, memoryLimit: '256MB', maxQueued: 8 });
});
afterAll(() => engine.close());

const groupFiles = async () => (await readdir(tempDir)).filter((f) => f.startsWith('extract-'));

const plan = (rowsPerGroup: number[], over: Partial<WriteAheadPlan> = {}): WriteAheadPlan => ({
  tempDir,
  groups: rowsPerGroup.length,
  write: (i, c, target) => copyInto(c, { sql: `COPY (SELECT ${i} AS g, i FROM range(${rowsPerGroup[i]}) t(i) ORDER BY i) TO '${target}' (FORMAT csv, HEADER false)`, params: [] }),
  waitLease: (signal) => engine.acquireBulk('a', signal),
  tryLease: () => engine.tryAcquireBulk('a'),
  maxInFlight: 2,
  aheadBytes: 64 << 20,
  expected: rowsPerGroup.reduce((a, b) => a + b, 0),
  skipFirstBytes: 0,
  signal: new AbortController().signal,
  engineWork: () => () => undefined,
  verify: async () => undefined,
  ...over,
});

async function collect(p: WriteAheadPlan): Promise<string> {
  let text = '';
  for await (const chunk of streamWrittenAhead(p)) text += chunk.toString();
  return text;
}

describe('streamWrittenAhead', () => {
  it('sends the groups in order and removes their files', async () => {
    const text = await collect(plan([3, 2, 0, 1]));
    expect(text).toBe('0,0\n0,1\n0,2\n1,0\n1,1\n3,0\n');
    expect(await groupFiles()).toEqual([]);
    expect(engine.busy).toBe(0);
  });

  it('throws when the groups wrote fewer rows than promised', async () => {
    await expect(collect({ ...plan([3, 2]), expected: 6 })).rejects.toBeInstanceOf(StreamIncompleteError);
    expect(await groupFiles()).toEqual([]);
  });

  it.each([
    ['no room lent', false],
    ['room lent whenever asked', true],
  ] as const)('a reader that falls behind stops production within the ahead bound and holds no connection (%s)', async (_name, lend) => {
    // Groups of about 1.3 MB, at most 3 MB ahead: a reader that takes one chunk and waits must
    // find a few group files on disk, not twenty (one more where room is lent), and every connection idle.
    let started = 0;
    const asked: number[] = [];
    const room = (bytes: number) => (asked.push(bytes), true);
    const p = plan(Array<number>(20).fill(150_000), { aheadBytes: 3 << 20, write: (i, c, t, sig) => (started++, plan([150_000]).write(0, c, t, sig)), expected: 20 * 150_000, ...(lend ? { room } : {}) });
    const gen = streamWrittenAhead(p);
    await gen.next();
    await new Promise((r) => setTimeout(r, 500));
    expect(engine.busy).toBe(0);
    expect(started).toBeLessThanOrEqual(lend ? 4 : 3);
    expect((await groupFiles()).length).toBeLessThanOrEqual(lend ? 4 : 3);
    // Room beyond the bound is only ever asked for one group more than it.
    expect(asked.every((bytes) => bytes < (3 << 20) + (1.5 * (1 << 20)))).toBe(true);
    let rows = 0;
    for await (const chunk of gen) rows += chunk.toString().split('\n').length - 1;
    expect(started).toBe(20);
    expect(rows).toBeGreaterThan(19 * 150_000);
    expect(await groupFiles()).toEqual([]);
  });

  it('groups too large for two to fit the bound are written two at a time only where the temp budget lends the room, which is given back', async () => {
    // Groups of about 1.3 MB against 2 MB ahead: once their size is known, a second one at once
    // needs room beyond the bound. Each write first waits 100 ms, so that the reader has always
    // drained the group before while the next is still being written.
    const atOnce = async (lend?: boolean) => {
      let writing = 0;
      const seen: number[] = [];
      const write: WriteAheadPlan['write'] = async (i, c, t, sig) => {
        seen[i] = ++writing;
        try {
          await new Promise((r) => setTimeout(r, 100));
          return await plan([150_000]).write(0, c, t, sig);
        } finally {
          writing--;
        }
      };
      const held: number[] = [];
      const room = lend === undefined ? undefined : (bytes: number) => (held.push(bytes), lend);
      // Leases outside the per-client share of bulk connections (one of this engine's three).
      const leases = { waitLease: (signal: AbortSignal) => engine.acquire(signal), tryLease: () => engine.tryAcquire() };
      await collect(plan(Array<number>(8).fill(150_000), { aheadBytes: 2 << 20, write, expected: 8 * 150_000, ...leases, ...(room ? { room } : {}) }));
      return { most: Math.max(...seen.slice(2)), held };
    };
    expect((await atOnce()).most).toBe(1);
    expect((await atOnce(false)).most).toBe(1);
    const lent = await atOnce(true);
    expect(lent.most).toBe(2);
    // Asked for one group beyond the bound, and asked for less again once that group was sent.
    expect(lent.held.some((bytes) => bytes > 2 << 20)).toBe(true);
    expect(lent.held.at(-1)!).toBeLessThanOrEqual(2 << 20);
    expect(engine.busy).toBe(0);
    expect(await groupFiles()).toEqual([]);
  });

  it('a verification that fails after a write ends the stream with its error before that group is sent', async () => {
    const p = plan([2, 2], { verify: async (i) => { if (i === 1) throw new Error('changed'); } });
    const seen: string[] = [];
    const run = async () => {
      for await (const chunk of streamWrittenAhead(p)) seen.push(chunk.toString());
    };
    await expect(run()).rejects.toThrow('changed');
    expect(seen.join('')).toBe('0,0\n0,1\n');
    expect(engine.busy).toBe(0);
    expect(await groupFiles()).toEqual([]);
  });

  it('an aborted response gives its connection back at once, wherever the abort lands in a long write', async () => {
    // A group DuckDB would need hours for: only an interrupt that reaches it ends the run (else the test times out).
    const long = (i: number, target: string) => ({ sql: `COPY (SELECT ${i} AS g, sum(i) FROM range(3000000000000) t(i)) TO '${target}' (FORMAT csv, HEADER false)`, params: [] });
    for (const afterMs of [0, 1, 5, 20, 100]) {
      const abort = new AbortController();
      const p = plan([1, 1], { signal: abort.signal, write: (i, c, t) => copyInto(c, long(i, t)) });
      const run = collect(p);
      setTimeout(() => abort.abort(new Error('client gone')), afterMs);
      await expect(run).rejects.toThrow();
      expect(engine.busy).toBe(0);
    }
    expect(await groupFiles()).toEqual([]);
  });
});
