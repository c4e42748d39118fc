/**
 * The `aggregate` scenario's repeat requests (aggregate-scenario.ts): each case asked once on a
 * server with its aggregate cache on (AGGREGATE_CACHE_MB's default), computed and kept, then
 * `runs` times more, each checked on /metrics to be answered from the cache. A case whose answer
 * is too large to keep is asked again once (computed again) and reported as not kept.
 */
import { fetchExtract, type HttpRun } from '../http/http-run.ts';
import type { DayWindow } from '../lib/options.ts';
import type { ServerProcess } from '../server/server-process.ts';
import { readMetrics } from '../server/server-metrics.ts';
import { atMost, headline, info, type Figure } from '../measure/table.ts';

export interface AggregateRepeat {
  name: string;
  /** The first request on this server: computed, and kept when it fits. */
  firstMs: number;
  /** False: the answer is larger than one entry of the cache may be, and every request computes it. */
  kept: boolean;
  /** Best of the repeats, each answered from the cache; null when not kept. */
  repeatMs: number | null;
  runs: number;
}

/** `runs` GETs of `url`, each checked whole (200, every row the header promised). */
export async function served(server: ServerProcess, url: string, runs: number): Promise<HttpRun[]> {
  const out: HttpRun[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await fetchExtract(`${server.baseUrl}${url}`, 'csv', server.requestHeaders);
    if (r.status !== 200 || r.rows !== r.returnedHeader) throw new Error(`${url}: status ${r.status}, ${r.rows} rows of ${r.returnedHeader}`);
    out.push(r);
  }
  return out;
}

const HITS = 'fire_api_aggregate_cache_hits_total';
const MISSES = 'fire_api_aggregate_cache_misses_total';

/** One GET of `url` and what the cache counted for it. */
async function counted(server: ServerProcess, url: string): Promise<{ run: HttpRun; hits: number; misses: number }> {
  const before = await readMetrics(server.baseUrl, [HITS, MISSES]);
  const [run] = await served(server, url, 1);
  const after = await readMetrics(server.baseUrl, [HITS, MISSES]);
  const delta = (name: string) => (after[name] ?? Number.NaN) - (before[name] ?? Number.NaN);
  return { run: run!, hits: delta(HITS), misses: delta(MISSES) };
}

/** Every case on `server` (AGGREGATE_REPEAT_ENV): computed once, then answered from the cache `runs` times. */
export async function measureRepeats(server: ServerProcess, cases: readonly { name: string; path: (year: string) => string }[], window: DayWindow, runs: number, log: (line: string) => void): Promise<AggregateRepeat[]> {
  const year = `from=${window.from}&to=${window.to}`;
  const out: AggregateRepeat[] = [];
  for (const c of cases) {
    const first = await counted(server, c.path(year));
    if (first.misses !== 1) throw new Error(`${c.name}: the first request was not computed (is the aggregate cache on, and empty of it?)`);
    const repeats: number[] = [];
    for (let i = 0; i < runs; i++) {
      const again = await counted(server, c.path(year));
      if (again.hits === 1) repeats.push(again.run.wallMs);
      else if (i > 0) throw new Error(`${c.name}: repeat ${i + 1} was not answered from the aggregate cache`);
      else break;
    }
    const kept = repeats.length > 0;
    log(`aggregate: ${c.name}: first ${first.run.wallMs.toFixed(0)} ms, ${kept ? `repeats ${repeats.map((ms) => ms.toFixed(0)).join(', ')} ms from the cache` : 'not kept (too large for one entry): computed again'}`);
    out.push({ name: c.name, firstMs: first.run.wallMs, kept, repeatMs: kept ? Math.min(...repeats) : null, runs: repeats.length });
  }
  return out;
}

/** A case's repeat figures: the first request with the cache on, whether it was kept, and the repeat's time and ratios. */
export function repeatFigures(s: string, c: { name: string; referenceMs: number }, r: AggregateRepeat | null, yearCsvMs: number): Figure[] {
  if (!r) return [];
  return [
    info(s, `${c.name}: first request with the aggregate cache on (computed; kept when it fits)`, r.firstMs, 'ms'),
    info(s, `${c.name}: kept in the aggregate cache (an entry at most a quarter of AGGREGATE_CACHE_MB)`, r.kept),
    ...(r.repeatMs === null
      ? []
      : [
          info(s, `${c.name}: repeat (from the aggregate cache), best of ${r.runs}`, r.repeatMs, 'ms'),
          atMost(s, `${c.name}: repeat ÷ GROUP BY`, r.repeatMs / c.referenceMs, 1.2),
          headline(atMost(s, `${c.name}: repeat ÷ year as CSV`, r.repeatMs / yearCsvMs, 0.02)),
        ]),
  ];
}
