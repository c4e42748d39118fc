import type { ClientIo } from '../io.ts';

interface PageFacts {
  returned: number;
  nextFrom: string | null;
  dataVersion: string;
  rowsSha256: string;
}

export interface WindowCheck {
  index: number;
  request: { from: string; to: string } | null;
  /** Same rows (count and hash), same truncation point, same columns. */
  identical: boolean;
  dataVersionChanged: boolean;
  differences: string[];
  recorded: PageFacts;
  now: PageFacts;
}

export interface FileCheck {
  path: string;
  state: 'matches' | 'differs' | 'missing';
}

export interface VerifyReport {
  manifest: string;
  service: string;
  windows: WindowCheck[];
  file: FileCheck;
}

/** Enough of a version to tell two apart on a terminal; --json has them whole. */
const short = (version: string) => (version.length > 19 ? `${version.slice(0, 19)}...` : version);

function windowLine(w: WindowCheck, total: number): string {
  const where = `window ${w.index + 1}/${total} ${w.request ? `from=${w.request.from} to=${w.request.to}` : '(no time window)'}`;
  const version = w.dataVersionChanged ? `data version changed (${short(w.recorded.dataVersion)} -> ${short(w.now.dataVersion)})` : 'same data version';
  // A rewritten file (e.g. after `fire-api compact`) changes the version and nothing a reader sees.
  if (w.identical && w.dataVersionChanged) return `${where}: rows identical, ${version}, ${w.now.returned} rows`;
  if (w.identical) return `${where}: identical, ${w.now.returned} rows`;
  return `${where}: CHANGED: ${w.differences.join('; ')}; ${version}`;
}

const FILE_TEXT = { matches: 'matches the manifest', differs: 'DIFFERS from the manifest (sha256)', missing: 'not found next to the manifest (not checked)' };

export function printReport(io: ClientIo, r: VerifyReport, json: boolean): void {
  const changed = r.windows.filter((w) => !w.identical);
  const identical = changed.length === 0 && r.file.state !== 'differs';
  if (json) {
    io.stdout.write(JSON.stringify({ ...r, identical }, null, 2) + '\n');
    return;
  }
  io.stdout.write(`verifying ${r.manifest} against ${r.service}\n`);
  for (const w of r.windows) io.stdout.write(`  ${windowLine(w, r.windows.length)}\n`);
  io.stdout.write(`  file ${r.file.path}: ${FILE_TEXT[r.file.state]}\n`);
  const versions = changed.filter((w) => w.dataVersionChanged).length;
  const rewritten = r.windows.filter((w) => w.identical && w.dataVersionChanged).length;
  const summary =
    changed.length > 0 ? `${changed.length} changed (data version changed in ${versions} of them)` : rewritten > 0 ? `all identical (rows identical, data version changed in ${rewritten})` : 'all identical';
  io.stdout.write(`${r.windows.length} windows: ${summary}${r.file.state === 'differs' ? '; the local file differs' : ''}\n`);
}
