import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../queries/engine/engine.ts';
import type { Job } from '../../../queries/renderings/render-job.ts';
import { MAX_QUEUED, RenderQueue } from '../../../queries/renderings/render-queue.ts';
import { tempDir } from '../../helpers/fixtures.ts';
import { until } from '../../helpers/until.ts';

// How soon the queue expects a file's rendering: the one under way by what is left of it, each
// after it at the pace (0.25 s before any rendering is timed).
let engine: Engine;
beforeAll(async () => {
  const dir = await tempDir();
  engine = await Engine.create({ dataDir: dir, tempDir: path.join(dir, 'tmp'), threads: 1, connections: 1, memoryLimit: '128MB', maxQueued: 10 });
});
afterAll(() => engine?.close());

/** A queued file: the queue hands it to the render function untouched. */
const job = { format: 'geojson' } as Omit<Job, 'done' | 'settle' | 'priority'>;

/** A queue whose renderings end when the test says: `finishAll()` ends each as it starts, kept, until none is left. */
function heldQueue() {
  const under: { key: string; end: () => void }[] = [];
  const queue = new RenderQueue((_engine, key) => new Promise<boolean>((resolve) => under.push({ key, end: () => resolve(true) })));
  const finishAll = async () => {
    while (queue.size > 0) {
      expect(await until(() => under.length > 0 || queue.size === 0)).toBe(true);
      under.shift()?.end();
    }
    for (const u of under.splice(0)) u.end();
  };
  return { queue, under, finishAll };
}

describe('render queue: when a window waits for its file\'s rendering', () => {
  it('for the file under way, by what is left of its expected time; never for one behind it', async () => {
    const { queue, under, finishAll } = heldQueue();
    const before = performance.now();
    for (const k of ['a', 'b']) queue.add(k, job, 'asked');
    queue.start(engine);
    expect(under.map((u) => u.key)).toEqual(['a']);
    // Just started: 250 ms left as seen from before it started, at most that from now.
    expect(queue.soon(engine, ['a'], 200, before)).toBeNull();
    expect(queue.soon(engine, ['a'], 250, performance.now())).not.toBeNull();
    // 200 ms into it (or more): at most 50 ms left.
    const later = performance.now() + 200;
    expect(queue.soon(engine, ['a'], 50, later)).not.toBeNull();
    // Overdue (past 250 ms, within 500): expected any moment. Past twice its time: not expected at all.
    expect(queue.soon(engine, ['a'], 0, performance.now() + 300)).not.toBeNull();
    expect(queue.soon(engine, ['a'], Infinity, later + 1000)).toBeNull();
    // Behind it, or with it, however slow the old way; nor a file not queued, nor no file.
    for (const keys of [['b'], ['a', 'b'], ['z'], []]) expect(queue.soon(engine, keys, Infinity)).toBeNull();
    await finishAll();
    expect(under).toEqual([]);
  });

  it('with none under way, for the next: a file asked for before files only seen, whatever the order they were queued in', async () => {
    const { queue, finishAll } = heldQueue();
    queue.add('seen-1', job, 'seen');
    queue.add('seen-2', job, 'seen');
    queue.add('asked', job, 'asked');
    const now = performance.now();
    expect(queue.soon(engine, ['seen-1'], Infinity, now)).toBeNull();
    // None under way: a whole rendering (250 ms) left.
    expect(queue.soon(engine, ['asked'], 240, now)).toBeNull();
    expect(queue.soon(engine, ['asked'], 260, now)).not.toBeNull();
    await finishAll();
  });

  it('with only seen files queued, for the first of them', async () => {
    const { queue, finishAll } = heldQueue();
    queue.add('seen-1', job, 'seen');
    queue.add('seen-2', job, 'seen');
    expect(queue.soon(engine, ['seen-2'], Infinity)).toBeNull();
    expect(queue.soon(engine, ['seen-1'], Infinity)).not.toBeNull();
    await finishAll();
  });
});

describe('render queue: files present at start', () => {
  const geojson = { format: 'geojson' } as Omit<Job, 'done' | 'settle' | 'priority'>;
  const csv = { format: 'csv' } as Omit<Job, 'done' | 'settle' | 'priority'>;

  it('rendered after every other file: GeoJSON before CSV, the last queued first', async () => {
    const { queue, under, finishAll } = heldQueue();
    const started: string[] = [];
    queue.add('csv-0', csv, 'stock');
    queue.add('geojson-0', geojson, 'stock');
    queue.add('geojson-1', geojson, 'stock');
    queue.add('csv-1', csv, 'stock');
    queue.add('quiet', geojson, 'quiet');
    queue.add('geojson-2', geojson, 'stock');
    queue.add('seen', geojson, 'seen');
    queue.start(engine);
    while (queue.size > 0) {
      expect(await until(() => under.length > 0)).toBe(true);
      const u = under.shift()!;
      started.push(u.key);
      u.end();
      expect(await until(() => !queue.has(u.key))).toBe(true);
    }
    expect(started).toEqual(['quiet', 'seen', 'geojson-2', 'geojson-1', 'geojson-0', 'csv-1', 'csv-0']);
    await finishAll();
  });

  it('past the bound, the newest kept: each queued takes the place of the one queued first', () => {
    const { queue } = heldQueue();
    for (let i = 0; i <= MAX_QUEUED; i++) queue.add(`geojson-${i}`, geojson, 'stock');
    expect([queue.size, queue.has('geojson-0'), queue.has('geojson-1'), queue.has(`geojson-${MAX_QUEUED}`)]).toEqual([MAX_QUEUED, false, true, true]);
    // Never started: closed, every job settled.
    queue.close();
    expect(queue.size).toBe(0);
  });

  it('the one under way is left to end when the others are dropped', async () => {
    const { queue, under, finishAll } = heldQueue();
    for (const k of ['a', 'b']) queue.add(k, geojson, 'stock');
    queue.start(engine);
    expect(under.map((u) => u.key)).toEqual(['b']);
    queue.dropStock();
    expect([queue.has('a'), queue.has('b'), queue.size]).toEqual([false, true, 1]);
    await finishAll();
    expect(queue.size).toBe(0);
  });

  it('one asked for is moved up; once the budget is full the others are dropped, the one under way left to end', async () => {
    const { queue, under, finishAll } = heldQueue();
    for (const k of ['a', 'b', 'c', 'd']) queue.add(k, geojson, 'stock');
    queue.add('b', geojson, 'asked');
    queue.start(engine);
    expect(under.map((u) => u.key)).toEqual(['b']);
    queue.add('e', geojson, 'seen');
    queue.dropStock();
    expect([queue.has('b'), queue.has('a'), queue.has('c'), queue.has('d'), queue.has('e')]).toEqual([true, false, false, false, true]);
    await finishAll();
  });
});
