import http from 'node:http';
import { readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import type { DayWindow } from '../lib/options.ts';
import { runPool } from '../lib/pool.ts';
import { readStatusMb } from '../server/rss.ts';
import type { ServerProcess } from '../server/server-process.ts';
import { bearer } from '../measure/session.ts';
import { sendSoakRequest, SOAK_KINDS, soakRequests, type SoakAnswer } from './soak-requests.ts';

export interface SoakAsk {
  dataset: string;
  window: DayWindow;
  /** Requests in all; RSS is also read after the first `checkpoint` of them (10,000 of 100,000). */
  requests: number;
  checkpoint: number;
  concurrency: number;
  keys: readonly string[];
  /** The server's TEMP_DIR: its files are counted. */
  tempDir: string;
  /** The most the bench waits for the server to be idle again (descriptors and temp files back). */
  idleTimeoutMs: number;
}

/** The server process as seen from outside. */
export interface SoakState {
  rssMb: number;
  heapUsedMb: number;
  /** Entries of /proc/<pid>/fd. */
  fds: number;
  /** Of those, TCP connections a client holds open (keep-alive): the client's to close, not a leak. */
  clientConnections: number;
  /** Of those, sockets closing (neither listening nor established): a moment after a client left. */
  closing: number;
  /** Of those, renderings' files kept open between windows (RENDER_CACHE_MB: at most 64, a cache, not a leak). */
  renderingFds: number;
  /** Files under TEMP_DIR, the renderings' folder apart. */
  tempFiles: number;
  /** Files in the renderings' folder (a cache within RENDER_CACHE_MB). */
  renderingFiles: number;
}

/** Descriptors the server holds of its own accord: all but its clients' open connections and its renderings' files. */
export const heldFds = (x: SoakState): number => x.fds - x.clientConnections - x.renderingFds;

export interface SoakResult {
  requests: number;
  concurrency: number;
  wallSeconds: number;
  statusCounts: Record<string, number>;
  serverErrors: number;
  hungUp: number;
  /** Transfers the server cut itself: never expected. */
  broken: number;
  start: SoakState;
  checkpoint: SoakState & { requests: number };
  end: SoakState;
  /** Whether, after the last request, the server was back to the start's descriptors (its clients' open connections aside) and temp files. */
  idleReached: boolean;
  idleWaitMs: number;
  /** RSS at the end ÷ RSS at the checkpoint. */
  rssGrowth: number;
}

/** The folder renderings are kept in under TEMP_DIR. */
const RENDERINGS = 'renderings';

/** Files under `dir`, those under a renderings folder apart. */
async function countFiles(dir: string, inRenderings = false): Promise<{ files: number; renderings: number }> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const counts = await Promise.all(entries.map((e) => (e.isDirectory() ? countFiles(path.join(dir, e.name), inRenderings || e.name === RENDERINGS) : Promise.resolve(inRenderings ? { files: 0, renderings: 1 } : { files: 1, renderings: 0 }))));
  return counts.reduce((a, b) => ({ files: a.files + b.files, renderings: a.renderings + b.renderings }), { files: 0, renderings: 0 });
}

/** TCP sockets by inode with their state (hex, as /proc/net/tcp gives it: 01 established, 0A listening). */
async function tcpStates(): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[9]) states.set(fields[9], fields[3] ?? '');
    }
  }
  return states;
}

async function descriptors(pid: number): Promise<Pick<SoakState, 'fds' | 'clientConnections' | 'closing' | 'renderingFds'>> {
  const dir = `/proc/${pid}/fd`;
  const links = await Promise.all((await readdir(dir)).map((fd) => readlink(path.join(dir, fd)).catch(() => '')));
  const states = await tcpStates();
  const socketStates = links.flatMap((l) => {
    const inode = /^socket:\[(\d+)\]$/.exec(l)?.[1];
    const state = inode === undefined ? undefined : states.get(inode);
    return state === undefined ? [] : [state];
  });
  // A rendering removed while still open (evicted, read meanwhile) is one; a removed file held open for good is a leak, so it is not.
  const renderingFds = links.filter((l) => l.includes(`${path.sep}${RENDERINGS}${path.sep}`) && !l.endsWith(' (deleted)')).length;
  return { fds: links.length, clientConnections: socketStates.filter((st) => st === '01').length, closing: socketStates.filter((st) => st !== '01' && st !== '0A').length, renderingFds };
}

/** A gauge of the server's own /metrics (NaN when absent), on a connection closed at once (it must not count as open). */
function metricOf(baseUrl: string, name: string): Promise<number> {
  return new Promise((resolve) => {
    http.get(`${baseUrl}/metrics`, { agent: false, headers: { connection: 'close' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve(Number(new RegExp(`^${name} ([0-9.e+]+)$`, 'm').exec(text)?.[1] ?? Number.NaN)));
    }).on('error', () => resolve(Number.NaN));
  });
}

/** The server's used heap. */
const heapUsedMb = async (baseUrl: string): Promise<number> => (await metricOf(baseUrl, 'nodejs_heap_size_used_bytes')) / 1e6;

async function stateOf(server: ServerProcess, tempDir: string, heapMb: number): Promise<SoakState> {
  const held = await descriptors(server.pid);
  const files = await countFiles(tempDir);
  return { rssMb: readStatusMb(server.pid, 'VmRSS') ?? Number.NaN, heapUsedMb: heapMb, ...held, tempFiles: files.files, renderingFiles: files.renderings };
}

/**
 * Polls until no file waits to be rendered (a rendering under way holds its data file and its
 * output open), no socket is closing and, when `back` is given, the descriptors the server holds of
 * its own accord and the temp files are at most its own: the state the soak asks for, not a
 * time; `timeoutMs` only bounds a run that never gets there.
 */
async function waitForIdle(server: ServerProcess, ask: SoakAsk, back: SoakState | null): Promise<{ reached: boolean; waitedMs: number }> {
  const started = performance.now();
  for (;;) {
    // Renderings off: the gauge says 0.
    const rendering = (await metricOf(server.baseUrl, 'fire_api_renderings_pending')) > 0;
    const now = await stateOf(server, ask.tempDir, Number.NaN);
    const reached = !rendering && now.closing === 0 && (!back || (heldFds(now) <= heldFds(back) && now.tempFiles <= back.tempFiles));
    const waitedMs = performance.now() - started;
    if (reached || waitedMs >= ask.idleTimeoutMs) return { reached, waitedMs };
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Requests `from`..`to` of the mix, `concurrency` at a time on one keep-alive agent, closed at the end. */
async function runPhase(server: ServerProcess, ask: SoakAsk, next: ReturnType<typeof soakRequests>, etags: Map<string, string>, range: [number, number]): Promise<SoakAnswer[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: ask.concurrency });
  try {
    return await runPool(range[1] - range[0], ask.concurrency, async (k) => {
      const i = range[0] + k;
      const r = next(i, etags);
      const answer = await sendSoakRequest(server.baseUrl, agent, r, bearer(ask.keys[i % ask.keys.length] ?? ''));
      if (answer.etag && r.kind === 'csv' && etags.size < 64) etags.set(r.path, answer.etag);
      return answer;
    });
  } finally {
    agent.destroy();
  }
}

/**
 * soak: one round of every kind (so what opens once is open), the start state once idle; the
 * first `checkpoint` requests, idle, its state; the rest, idle, the end state. RSS is compared
 * between the checkpoint and the end; descriptors and temp files between the start and the end.
 */
export async function runSoak(server: ServerProcess, ask: SoakAsk): Promise<SoakResult> {
  const next = soakRequests(ask.dataset, ask.window, 7);
  const etags = new Map<string, string>();
  await runPhase(server, ask, next, etags, [0, SOAK_KINDS.length * 2]);
  const startHeap = await heapUsedMb(server.baseUrl);
  await waitForIdle(server, ask, null);
  const start = await stateOf(server, ask.tempDir, startHeap);
  const began = performance.now();
  const first = await runPhase(server, ask, next, etags, [0, ask.checkpoint]);
  await waitForIdle(server, ask, start);
  const checkpoint = { ...(await stateOf(server, ask.tempDir, await heapUsedMb(server.baseUrl))), requests: ask.checkpoint };
  const rest = await runPhase(server, ask, next, etags, [ask.checkpoint, ask.requests]);
  const wallSeconds = (performance.now() - began) / 1000;
  const endHeap = await heapUsedMb(server.baseUrl);
  const idle = await waitForIdle(server, ask, start);
  const end = await stateOf(server, ask.tempDir, endHeap);
  server.assertAlive();
  const answers = [...first, ...rest];
  const statusCounts: Record<string, number> = {};
  for (const a of answers) statusCounts[a.status] = (statusCounts[a.status] ?? 0) + 1;
  return {
    requests: answers.length,
    concurrency: ask.concurrency,
    wallSeconds,
    statusCounts,
    serverErrors: answers.filter((a) => a.status >= 500).length,
    hungUp: answers.filter((a) => a.outcome === 'hung-up').length,
    broken: answers.filter((a) => a.outcome === 'broken').length,
    start,
    checkpoint,
    end,
    idleReached: idle.reached,
    idleWaitMs: idle.waitedMs,
    rssGrowth: end.rssMb / checkpoint.rssMb,
  };
}
