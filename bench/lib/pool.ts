/**
 * Runs `task(0..count-1)` with at most `concurrency` in flight and returns the results in index
 * order. A failing task rejects the whole run once the tasks already started have settled, so no
 * request is left running behind the bench's back.
 */
export async function runPool<T>(count: number, concurrency: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  let failure: unknown = null;
  const worker = async () => {
    while (failure === null && next < count) {
      const i = next++;
      try {
        results[i] = await task(i);
      } catch (e) {
        failure ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, worker));
  if (failure !== null) throw failure;
  return results;
}
