import type { Client } from 'autocannon';
import type { ServerProcess } from '../server/server-process.ts';
import { fire, type SmallWindowsAsk } from './small-windows.ts';

/** One autocannon run as the client saw it, response by response. */
export interface LoadRun {
  connections: number;
  seconds: number;
  ok: number;
  /** 200s per second: the goodput. */
  goodput: number;
  okP50Ms: number;
  okP99Ms: number;
  refused: number;
  refusedP99Ms: number;
  /** Retry-After of the 503s, whole seconds. */
  retryAfter: { min: number; median: number; max: number } | null;
  otherStatuses: Record<string, number>;
  /** Connection errors and timeouts. */
  errors: number;
}

/** The value at quantile `q` of ascending `sorted` (NaN when empty). */
export const quantile = (sorted: readonly number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : Number.NaN);

/** Every response's status, latency and Retry-After, kept by the bench (autocannon mixes the statuses). */
export async function loadRun(server: ServerProcess, ask: Omit<SmallWindowsAsk, 'connections' | 'seconds'>, connections: number, seconds: number): Promise<LoadRun> {
  const ok: number[] = [];
  const refused: number[] = [];
  const retryAfter: number[] = [];
  const other: Record<string, number> = {};
  const watch = (client: Client) => {
    client.on('headers', (head) => {
      if (head.statusCode !== 503) return;
      const i = head.headers.findIndex((h, j) => j % 2 === 0 && h.toLowerCase() === 'retry-after');
      if (i >= 0) retryAfter.push(Number(head.headers[i + 1]));
    });
    client.on('response', (status, _bytes, ms) => {
      if (status === 200) ok.push(ms);
      else if (status === 503) refused.push(ms);
      else other[status] = (other[status] ?? 0) + 1;
    });
  };
  const result = await fire(server, { ...ask, connections, seconds }, seconds, 3, watch);
  server.assertAlive();
  const sort = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const [okSorted, refusedSorted, retrySorted] = [sort(ok), sort(refused), sort(retryAfter)];
  return {
    connections,
    seconds,
    ok: ok.length,
    goodput: ok.length / seconds,
    okP50Ms: quantile(okSorted, 0.5),
    okP99Ms: quantile(okSorted, 0.99),
    refused: refused.length,
    refusedP99Ms: quantile(refusedSorted, 0.99),
    retryAfter: retrySorted.length ? { min: retrySorted[0]!, median: quantile(retrySorted, 0.5), max: retrySorted.at(-1)! } : null,
    otherStatuses: other,
    errors: result.errors + result.timeouts,
  };
}
