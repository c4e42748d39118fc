import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine, type Lease } from '../../../queries/engine/engine.ts';
import { EngineBusyError } from '../../../queries/errors.ts';
import { tempDir } from '../../helpers/fixtures.ts';

let engines: Engine[] = [];
async function engine(maxQueueWaitMs: number): Promise<Engine> {
  const root = await tempDir();
  const e = await Engine.create({ dataDir: path.join(root, 'data'), tempDir: path.join(root, 'tmp'), threads: 1, connections: 1, memoryLimit: '256MB', maxQueued: 100, maxQueueWaitMs });
  engines.push(e);
  return e;
}
afterEach(() => {
  for (const e of engines) e.close();
  engines = [];
});

/** The one connection held (one hand-out: a pace of 0.5–1 per second) and one request waiting. */
async function oneHeldOneWaiting(e: Engine): Promise<{ held: Lease; waiting: Promise<Lease> }> {
  const held = await e.acquire();
  const waiting = e.acquire();
  waiting.catch(() => undefined);
  expect(e.queued).toBe(1);
  return { held, waiting };
}

describe('Engine queue bounded by time as well as by count', () => {
  it('refuses a request that would wait longer than maxQueueWaitMs at the measured pace, far below DUCKDB_QUEUE_MAX', async () => {
    const e = await engine(1500);
    const { held, waiting } = await oneHeldOneWaiting(e);
    // Two ahead (the waiting one and this one) at ≤ 1 per second: at least 2 s > 1.5 s.
    expect(e.saturated).toBe(true);
    const refused = await e.acquire().then(() => null, (err: unknown) => err);
    expect(refused).toBeInstanceOf(EngineBusyError);
    expect((refused as EngineBusyError).drainSeconds).toBeGreaterThanOrEqual(2);
    held.release();
    (await waiting).release();
  });

  it('queues the same request when the wait it faces is within maxQueueWaitMs', async () => {
    const e = await engine(60_000);
    const { held, waiting } = await oneHeldOneWaiting(e);
    expect(e.saturated).toBe(false);
    const second = e.acquire();
    expect(e.queued).toBe(2);
    held.release();
    (await waiting).release();
    (await second).release();
    expect(e.busy).toBe(0);
  });

  it('never refuses the first in line by time: an empty queue takes a request whatever the pace', async () => {
    const e = await engine(1);
    const held = await e.acquire();
    const first = e.acquire();
    expect(e.queued).toBe(1);
    held.release();
    (await first).release();
  });
});
