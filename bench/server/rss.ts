import { readFileSync } from 'node:fs';

// Decimal megabytes: the target is stated in MB, and the stricter reading of it is 10^6 bytes.
const MB = 1_000_000;

/** A `kB` (KiB) field of /proc/<pid>/status in MB, or null once the process is gone. */
export function readStatusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? (Number(match[1]) * 1024) / MB : null;
  } catch {
    return null;
  }
}

/** User + system CPU seconds of a process (all its threads, DuckDB's included), from /proc/<pid>/stat. */
export function readCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name, which may itself hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    // USER_HZ is 100 on every Linux this runs on; node has no sysconf to ask.
    return ticks / 100;
  } catch {
    return null;
  }
}

export interface RssSampler {
  /** Stops sampling (idempotent); returns the peak VmRSS seen (MB) and how many samples it rests on. */
  stop(): { peakMb: number; samples: number };
}

/**
 * Samples VmRSS every `intervalMs` from outside the process. A peak shorter than the interval
 * can be missed, which is why VmHWM (the kernel's own high-water mark) is reported as well.
 */
export function sampleRss(pid: number, intervalMs = 50): RssSampler {
  let peakMb = 0;
  let samples = 0;
  const take = () => {
    const mb = readStatusMb(pid, 'VmRSS');
    if (mb === null) return;
    samples++;
    if (mb > peakMb) peakMb = mb;
  };
  take();
  const timer = setInterval(take, intervalMs);
  let result: { peakMb: number; samples: number } | null = null;
  return {
    stop: () => {
      if (result) return result;
      clearInterval(timer);
      take();
      return (result = { peakMb, samples });
    },
  };
}
