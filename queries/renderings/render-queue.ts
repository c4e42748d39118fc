import type { Engine } from '../engine/engine.ts';
import type { Job, RenderPriority } from './render-job.ts';
import { contended, idle } from './render-timing.ts';

export type { RenderPriority } from './render-job.ts';

/** Files of each priority waiting beyond this are not queued; they are asked for again by their next window. */
export const MAX_QUEUED = 1000;
/** Files queued at most by priority: files seen by the background checks, new data, a little at a time. */
const MOST_QUEUED: Record<RenderPriority, number> = { asked: MAX_QUEUED, quiet: MAX_QUEUED, seen: 16, stock: MAX_QUEUED };
const RANK: Record<RenderPriority, number> = { stock: 0, quiet: 1, seen: 2, asked: 3 };
/** The longest a window waits for its file's rendering, however the rendering fares (a stalled disk): past it, the window goes the old way. */
export const MAX_WAIT_MS = 6000;
/** A rendering's expected time before any is measured (a day file of hotspots on a quiet core: 0.15–0.25 s). */
const FIRST_RENDER_MS = 250;
/** How often seen files waiting look again whether requests still wait for DuckDB. */
const YIELD_MS = 50;

/**
 * Files waiting to be rendered (and the one being rendered), rendered one after another in the
 * order asked, a file only seen by the background checks after every file asked for and only while
 * no request waits for DuckDB; and the recent pace of renderings kept, which says how soon the file
 * under way or next is expected done (a window waits for no other).
 */
export class RenderQueue {
  private readonly jobs = new Map<string, Job>();
  /** Jobs queued at each priority (the one under way included). */
  private readonly counts: Record<RenderPriority, number> = { asked: 0, quiet: 0, seen: 0, stock: 0 };
  private working = false;
  /** The job being rendered, and when it started (performance.now()). */
  private current: string | undefined;
  private startedMs = 0;
  /** Set while seen files wait for the engine to be idle: when it is looked at again. */
  private retry: NodeJS.Timeout | undefined;
  /** How long a rendering kept takes lately (ms). */
  private renderMs = FIRST_RENDER_MS;
  private closed = false;

  /** `render` renders a job and says whether it was kept. */
  constructor(private readonly render: (engine: Engine, key: string, job: Job) => Promise<boolean>) {}

  get size(): number {
    return this.jobs.size;
  }

  has(key: string): boolean {
    return this.jobs.has(key);
  }

  /**
   * Queues a file under `key` at `priority` unless as many of that priority wait (MOST_QUEUED; a file
   * present at start instead takes the place of the one of them queued first); one queued already is
   * moved up to `priority` if that is sooner. The caller starts the work.
   */
  add(key: string, job: Omit<Job, 'done' | 'settle' | 'priority'>, priority: RenderPriority): void {
    const queued = this.jobs.get(key);
    if (queued) return void (RANK[priority] > RANK[queued.priority] && this.raise(queued, priority));
    if (this.closed) return;
    // Files present at start are listed oldest first: past the bound, the oldest queued makes way.
    if (priority === 'stock' && this.counts.stock >= MOST_QUEUED.stock) this.dropStock(1);
    if (this.counts[priority] >= MOST_QUEUED[priority]) return;
    let settle = () => undefined as void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    this.jobs.set(key, { ...job, priority, done, settle });
    this.counts[priority]++;
  }

  private raise(job: Job, priority: RenderPriority): void {
    this.counts[job.priority]--;
    this.counts[priority]++;
    job.priority = priority;
  }

  /** The job leaves the queue, settled. */
  private remove(key: string, job: Job): void {
    if (this.jobs.get(key) !== job) return;
    this.jobs.delete(key);
    this.counts[job.priority]--;
    job.settle();
  }

  /**
   * Files present at start no longer rendered, the first `most` queued (all by default): the budget
   * has no room left for them (a rendering of one never makes room by evicting another), or newer
   * ones take their place. The one under way, if one, ends by itself.
   */
  dropStock(most = Infinity): void {
    for (const [key, job] of this.jobs) {
      if (most <= 0) return;
      if (job.priority !== 'stock' || key === this.current) continue;
      this.remove(key, job);
      most--;
    }
  }

  /**
   * The queued jobs of `keys`, no longer only seen, when they are one file, the one under way or
   * next, expected done within `withinMs` (at the pace of the last renderings kept, the one under
   * way by what is left of it, and not at all once it has taken twice that); else null. A window
   * never waits for a file further down the queue: under load a rendering takes two to three times
   * what it took on a quiet core, and each file ahead adds that error (waits for files down the
   * queue made a fresh server's burst tail 1–1.8 s).
   */
  soon(engine: Engine, keys: readonly string[], withinMs: number, nowMs = performance.now()): Job[] | null {
    if (this.closed || engine.isClosed || keys.length !== 1 || keys[0] !== this.first()) return null;
    // Past twice its expected time, the one under way says nothing of when it ends (a stalled disk).
    const elapsed = this.current === undefined ? 0 : nowMs - this.startedMs;
    if (elapsed > 2 * this.renderMs) return null;
    const left = this.current === undefined ? this.renderMs : Math.max(0, this.renderMs - elapsed);
    if (left > withinMs) return null;
    const jobs = keys.map((k) => this.jobs.get(k)!);
    // Waited for: no longer only while the engine is idle.
    for (const j of jobs) this.raise(j, 'asked');
    this.start(engine);
    return jobs;
  }

  /** The file rendered first: the one under way, else the first asked for, else the first queued (seen, quiet or present at start). */
  private first(): string | undefined {
    if (this.current !== undefined) return this.current;
    for (const [key, job] of this.jobs) if (job.priority === 'asked') return key;
    return this.jobs.keys().next().value;
  }

  /**
   * Nothing more is queued or started, and every job still queued is settled at once: a window
   * waiting for one is answered the old way instead of waiting out its bound. The rendering under
   * way ends when the engine's close interrupts it.
   */
  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    this.retry = undefined;
    for (const job of this.jobs.values()) job.settle();
    this.jobs.clear();
    for (const p of Object.keys(this.counts) as RenderPriority[]) this.counts[p] = 0;
  }

  start(engine: Engine): void {
    if (!this.working && this.jobs.size > 0) void this.work(engine);
  }

  private async work(engine: Engine): Promise<void> {
    this.working = true;
    try {
      // Each job leaves the queue only once done: asked again meanwhile, it is not queued twice.
      for (let next = this.next(engine); next; next = this.next(engine)) {
        const started = performance.now();
        [this.current, this.startedMs] = [next[0], started];
        // The recent pace of renderings kept, a third for the last one: a rendering's time moves with
        // the load. One that failed or was refused early would make the next ones look sooner than they are.
        if (await this.render(engine, next[0], next[1])) this.renderMs += (performance.now() - started - this.renderMs) / 3;
        this.remove(next[0], next[1]);
      }
    } finally {
      this.working = false;
      this.current = undefined;
    }
    // Only seen files left, and requests wait for DuckDB: looked at again later, never waited on, so
    // a file asked for meanwhile starts the work at once instead of queueing behind them.
    if (this.jobs.size > 0) this.retry ??= setTimeout(() => this.resume(engine), YIELD_MS).unref();
  }

  private resume(engine: Engine): void {
    this.retry = undefined;
    this.start(engine);
  }

  /**
   * The first file asked for; when none is left, the first not asked for: a seen file only while the
   * engine is idle, a large window's file only while no request uses DuckDB at all (checked per job);
   * then, as quietly, a file present at start: GeoJSON (the default format) before CSV, the last
   * queued first (the files are listed oldest first, and recent data is asked for most).
   */
  private next(engine: Engine): [string, Job] | undefined {
    // The engine closed: none of the files left can be rendered any more.
    if (engine.isClosed) this.close();
    const [quiet, calm] = [!contended(engine), idle(engine)];
    let later: [string, Job] | undefined;
    let stock: [string, Job] | undefined;
    for (const entry of this.jobs) {
      const p = entry[1].priority;
      if (p === 'asked') return entry;
      if (p === 'stock') {
        if (quiet && (!stock || entry[1].format === 'geojson' || stock[1].format === 'csv')) stock = entry;
      } else if (p === 'quiet' ? quiet : calm) later ??= entry;
    }
    return later ?? stock;
  }
}
