import { heldFds, type SoakResult, type SoakState } from '../scenarios/soak.ts';
import { atMost, headline, info, mustHold, type Figure } from '../measure/table.ts';

/** RSS after all of soak's requests ÷ RSS after the first tenth (100,000 and 10,000 by default). */
export const SOAK_TARGETS = { maxRssGrowth: 1.1 } as const;

function stateFigures(s: string, when: string, x: SoakState): Figure[] {
  return [
    info(s, `server RSS ${when}`, x.rssMb, 'MB'),
    info(s, `server heap used ${when} (nodejs_heap_size_used_bytes)`, x.heapUsedMb, 'MB'),
    info(s, `open file descriptors ${when} (/proc/<pid>/fd)`, x.fds),
    info(s, `of which clients' open keep-alive connections ${when}`, x.clientConnections),
    info(s, `of which renderings' files kept open ${when} (at most 64)`, x.renderingFds),
    info(s, `files in TEMP_DIR ${when}, renderings apart`, x.tempFiles),
    info(s, `renderings' files ${when} (RENDER_CACHE_MB)`, x.renderingFiles),
  ];
}

/** Renderings' files a server keeps open between windows at most. */
const MOST_RENDERINGS_OPEN = 64;

/** Descriptors (clients' open connections and renderings' files aside) and temp files (renderings apart) at most what they were at the start, once the server was idle, and no more renderings open than a server keeps. */
export const backToStart = (r: SoakResult): boolean => r.idleReached && heldFds(r.end) <= heldFds(r.start) && r.end.tempFiles <= r.start.tempFiles && r.end.renderingFds <= MOST_RENDERINGS_OPEN;

export function soakFigures(r: SoakResult): Figure[] {
  const s = 'soak';
  return [
    info(s, `mixed requests (${r.concurrency} at a time; ${r.hungUp} hung up mid-body)`, r.requests),
    info(s, 'wall time', r.wallSeconds, 's'),
    ...stateFigures(s, 'at start (idle)', r.start),
    ...stateFigures(s, `after ${r.checkpoint.requests.toLocaleString('en')} requests (idle)`, r.checkpoint),
    ...stateFigures(s, 'at the end (idle)', r.end),
    headline(atMost(s, `RSS at the end ÷ after ${r.checkpoint.requests.toLocaleString('en')} requests`, r.rssGrowth, SOAK_TARGETS.maxRssGrowth)),
    headline(mustHold(s, 'descriptors and temp files back to the start once idle', backToStart(r))),
    headline(mustHold(s, 'no 5xx, no transfer cut by the server', r.serverErrors === 0 && r.broken === 0)),
    info(s, 'waited for the server to be idle again', r.idleWaitMs, 'ms'),
  ];
}

/** What makes the soak broken rather than slow: a 5xx, a cut transfer, or what the requests held never given back. */
export function soakProblems(r: SoakResult | undefined): string[] {
  if (!r) return [];
  const problems: string[] = [];
  if (r.serverErrors > 0 || r.broken > 0) problems.push(`soak: statuses ${JSON.stringify(r.statusCounts)}, ${r.broken} transfers cut by the server`);
  if (!backToStart(r)) {
    problems.push(`soak: not back to the start once idle: ${heldFds(r.start)} -> ${heldFds(r.end)} descriptors (clients' connections and renderings aside), ${r.start.tempFiles} -> ${r.end.tempFiles} temp files`);
  }
  return problems;
}
