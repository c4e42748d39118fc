import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine, type Lease } from '../../../queries/engine/engine.ts';
import { EngineBusyError } from '../../../queries/errors.ts';
import { tempDir } from '../../helpers/fixtures.ts';

let engines: Engine[] = [];
async function engine(connections: number, maxQueued = 64): Promise<Engine> {
  const root = await tempDir();
  const e = await Engine.create({ dataDir: path.join(root, 'data'), tempDir: path.join(root, 'tmp'), threads: 2, connections, memoryLimit: '256MB', maxQueued });
  engines.push(e);
  return e;
}
afterEach(() => {
  for (const e of engines) e.close();
  engines = [];
});

const tick = () => new Promise((r) => setTimeout(r, 10));
const SMALL = 'SELECT sum(i)::BIGINT FROM range(1000) t(i)';
const answer = async (c: DuckDBConnection) => (await c.runAndReadAll(SMALL)).getRows()[0]?.[0];

describe('Engine pool', () => {
  it('hands out at most `connections` leases and queues the rest', async () => {
    const e = await engine(2);
    const held = [await e.acquire(), await e.acquire()];
    expect(held[0]!.connection).not.toBe(held[1]!.connection);
    let third: Lease | null = null;
    void e.acquire().then((l) => (third = l), () => undefined);
    await tick();
    expect([e.busy, e.queued, third]).toEqual([2, 1, null]);
    held[0]!.release();
    await tick();
    expect(third).not.toBeNull();
    expect(third!.connection).toBe(held[0]!.connection);
    expect([e.busy, e.queued]).toEqual([2, 0]);
  });

  it('serves waiters first in, first out', async () => {
    const e = await engine(1);
    const first = await e.acquire();
    const order: string[] = [];
    const waiters = ['w1', 'w2', 'w3'].map((name) => e.acquire().then((l) => (order.push(name), l)));
    await tick();
    expect(e.queued).toBe(3);
    first.release();
    (await waiters[0]!).release();
    (await waiters[1]!).release();
    (await waiters[2]!).release();
    expect(order).toEqual(['w1', 'w2', 'w3']);
    expect([e.busy, e.queued]).toEqual([0, 0]);
  });

  it('an aborted signal removes its waiter, rejects with the reason, and the connection goes to the next waiter', async () => {
    const e = await engine(1);
    const first = await e.acquire();
    const abort = new AbortController();
    const aborted = e.acquire(abort.signal);
    const next = e.acquire();
    await tick();
    expect(e.queued).toBe(2);
    abort.abort(new Error('client went away'));
    await expect(aborted).rejects.toThrow('client went away');
    expect(e.queued).toBe(1);
    first.release();
    const lease = await next;
    expect(lease.connection).toBe(first.connection);
    expect([e.busy, e.queued]).toEqual([1, 0]);
  });

  it('an already aborted signal rejects at once without queueing', async () => {
    const e = await engine(1);
    const first = await e.acquire();
    await expect(e.acquire(AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
    expect(e.queued).toBe(0);
    first.release();
  });

  it('aborting after the lease was handed out changes nothing', async () => {
    const e = await engine(1);
    const abort = new AbortController();
    const lease = await e.acquire(abort.signal);
    abort.abort();
    expect(e.busy).toBe(1);
    lease.release();
    expect(e.busy).toBe(0);
  });

  it('releasing twice returns the connection once (no two leases share a connection)', async () => {
    const e = await engine(2);
    const a = await e.acquire();
    a.release();
    a.release();
    expect(e.busy).toBe(0);
    const leases = [await e.acquire(), await e.acquire()];
    expect(leases[0]!.connection).not.toBe(leases[1]!.connection);
    let third = false;
    void e.acquire().then(() => (third = true), () => undefined);
    await tick();
    expect(third).toBe(false);
  });

  it('close rejects the requests still waiting for a connection', async () => {
    const e = await engine(1);
    await e.acquire();
    const waiting = e.acquire();
    e.close();
    engines = engines.filter((x) => x !== e);
    await expect(waiting).rejects.toThrow(/closed/);
  });

  it('refuses at once beyond maxQueued waiters instead of piling them up', async () => {
    const e = await engine(1, 2);
    const held = await e.acquire();
    const waiting = [e.acquire(), e.acquire()];
    await expect(e.acquire()).rejects.toBeInstanceOf(EngineBusyError);
    held.release();
    (await waiting[0]!).release();
    (await waiting[1]!).release();
    expect(e.busy).toBe(0);
  });

  it('refuses to acquire after close', async () => {
    const e = await engine(1);
    e.close();
    engines = engines.filter((x) => x !== e);
    await expect(e.acquire()).rejects.toThrow(/closed/);
  });

  it('every connection of the pool runs queries', async () => {
    const e = await engine(3);
    const leases = await Promise.all([e.acquire(), e.acquire(), e.acquire()]);
    expect(await Promise.all(leases.map((l) => answer(l.connection)))).toEqual([499500n, 499500n, 499500n]);
  });
});

describe('Engine lanes', () => {
  it('an interactive request gets the next free connection ahead of every waiting bulk group', async () => {
    const e = await engine(2);
    const held = [await e.acquire(), await e.acquire()];
    const order: string[] = [];
    const bulk = e.acquireBulk('a').then((l) => (order.push('bulk'), l));
    await tick();
    const small = e.acquire().then((l) => (order.push('small'), l));
    await tick();
    held[0]!.release();
    (await small).release();
    held[1]!.release();
    (await bulk).release();
    expect(order).toEqual(['small', 'bulk']);
  });

  it('bulk work never takes the last connection: one stays for requests before their first byte', async () => {
    const e = await engine(3);
    const bulk = [await e.acquireBulk('a'), await e.acquireBulk('b')];
    expect(e.tryAcquireBulk('c')).toBeNull();
    let third: Lease | null = null;
    void e.acquireBulk('c').then((l) => (third = l), () => undefined);
    await tick();
    expect([e.busy, e.queuedBulk, third]).toEqual([2, 1, null]);
    // The reserved connection is still there for an interactive request.
    const small = await e.acquire();
    small.release();
    await tick();
    expect(third).toBeNull();
    bulk[0]!.release();
    await tick();
    expect(third).not.toBeNull();
    expect(e.busy).toBe(2);
  });

  it('a waiting bulk group is never refused by a full interactive queue, and an abort removes it', async () => {
    const e = await engine(1, 0);
    const held = await e.acquire();
    const abort = new AbortController();
    const waiting = e.acquireBulk('a', abort.signal);
    await expect(e.acquire()).rejects.toBeInstanceOf(EngineBusyError);
    expect(e.queuedBulk).toBe(1);
    abort.abort(new Error('client gone'));
    await expect(waiting).rejects.toThrow('client gone');
    expect(e.queuedBulk).toBe(0);
    held.release();
    expect(e.busy).toBe(0);
  });

  it("one client's groups leave a bulk connection to the others, who are served first when one is freed", async () => {
    const e = await engine(4);
    const mine = [await e.acquireBulk('a'), await e.acquireBulk('a')];
    expect(e.tryAcquireBulk('a')).toBeNull();
    const order: string[] = [];
    const again = e.acquireBulk('a').then((l) => (order.push('a'), l));
    const other = e.acquireBulk('b').then((l) => (order.push('b'), l));
    await tick();
    expect(order).toEqual(['b']);
    mine[0]!.release();
    await tick();
    expect(order).toEqual(['b', 'a']);
    for (const l of [mine[1]!, await again, await other]) l.release();
    expect(e.busy).toBe(0);
  });
});
