import type { Engine } from '../engine/engine.ts';

/** Resolves when `done` does, `signal` aborts or `ms` have passed. */
export function untilDoneOrAborted(done: Promise<unknown>, signal: AbortSignal, ms: number): Promise<unknown> {
  if (signal.aborted) return Promise.resolve();
  let stop = () => undefined as void;
  let timer: NodeJS.Timeout | undefined;
  const aborted = new Promise<void>((resolve) => signal.addEventListener('abort', (stop = () => resolve()), { once: true }));
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([done, aborted, late]).finally(() => (clearTimeout(timer), signal.removeEventListener('abort', stop)));
}

/** Some request uses or waits for a DuckDB connection: a window answered the old way shares the cores with it. */
export const contended = (engine: Engine): boolean => engine.busy > 0 || engine.queued > 0 || engine.queuedBulk > 0;

/** No request waits for a DuckDB connection and one is idle (or the engine is closed: the job fails and leaves). */
export function idle(engine: Engine): boolean {
  return engine.isClosed || (engine.queued === 0 && engine.queuedBulk === 0 && engine.busy < engine.size);
}
