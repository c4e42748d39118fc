import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  name: string;
  where: string;
  selfMs: number;
  share: number;
}

const shortUrl = (url: string) => {
  const i = url.indexOf('node_modules/');
  if (i >= 0) return url.slice(i + 'node_modules/'.length);
  return url.replace(/^file:\/\/.*?\/(server|queries|datasets|bench)\//, '$1/').replace(/^node:/, 'node:');
};

/**
 * Self time per function of the main JS thread, from V8's `.cpuprofile`. DuckDB's own threads
 * are not in it: time the main thread spends waiting for them shows as "(idle)" or "(program)".
 */
export function topSelfTimes(profile: CpuProfile, limit: number): SelfTime[] {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, SelfTime>();
  let all = 0;
  profile.samples.forEach((id, i) => {
    const deltaMs = (profile.timeDeltas[i] ?? 0) / 1000;
    const frame = byNode.get(id)?.callFrame;
    if (!frame) return;
    all += deltaMs;
    const where = frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '';
    const key = `${frame.functionName}\0${where}`;
    const entry = totals.get(key) ?? { name: frame.functionName || '(anonymous)', where, selfMs: 0, share: 0 };
    entry.selfMs += deltaMs;
    totals.set(key, entry);
  });
  return [...totals.values()]
    .map((e) => ({ ...e, share: all > 0 ? e.selfMs / all : 0 }))
    .sort((a, b) => b.selfMs - a.selfMs)
    .slice(0, limit);
}

const busyMs = (p: CpuProfile): number => topSelfTimes(p, Infinity).filter((t) => !t.name.startsWith('(')).reduce((a, t) => a + t.selfMs, 0);

/**
 * The profile of the server's main thread. Node writes one file per thread of process `pid`
 * (`CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`), and tsx's loader runs in a worker
 * thread of its own, so take the thread that ran the most JavaScript.
 */
export async function readServerProfile(dir: string, pid: number): Promise<CpuProfile | null> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.cpuprofile') && n.includes(`.${pid}.`));
  const profiles = await Promise.all(names.map(async (n) => JSON.parse(await readFile(path.join(dir, n), 'utf8')) as CpuProfile));
  return profiles.sort((a, b) => busyMs(b) - busyMs(a))[0] ?? null;
}

export function renderSelfTimes(rows: readonly SelfTime[]): string {
  return rows.map((r) => `  ${(r.share * 100).toFixed(1).padStart(5)} %  ${r.selfMs.toFixed(0).padStart(7)} ms  ${r.name}  ${r.where}`).join('\n');
}
