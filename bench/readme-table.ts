// Prints the bench table of docs/performance.md (markdown) from a bench report:
//   node --import tsx bench/readme-table.ts var/bench.json
// so the table in docs/performance.md is always a measured one, never typed by hand.
import { readFile } from 'node:fs/promises';
import { formatValue, verdict, type Figure, type Machine } from './table.ts';

/** The wording of each row, so docs/performance.md reads like the table it answers. */
const ROWS: Record<number, string> = {
  1: 'one-year hotspot CSV over HTTP',
  2: 'same, server peak RSS',
  3: 'one-month hotspot GeoJSON',
  4: 'four concurrent one-year CSV extracts',
  5: 'time to first byte, one-year window',
  6: 'small windows: 1-hour GeoJSON, 50 connections',
  7: 'growth: 1 day, 1 month, 1 year CSV',
  8: 'extracts aborted mid-stream',
  9: 'one-year sensor-readings CSV',
  10: '8 throttled one-year CSV downloads in flight, 1-hour GeoJSON windows measured',
  11: 'overload: 10× the best concurrency of 1-hour windows',
  12: 'a throttled one-year CSV download lasting past QUERY_TIMEOUT_MS',
  13: 'one-year hotspot Parquet (Accept) beside DuckDB COPY parquet',
  14: 'one-year hotspot Arrow IPC stream (Accept) beside DuckDB COPY parquet',
};

interface Report {
  measuredAtUtc?: string;
  machine: Machine;
  git?: { commit: string | null; dirty: boolean | null };
  options: { scale: number; days: number; end: string; only: string[] };
  figures: Figure[];
  load: { before: number[]; after: number[] };
  totalSeconds: number;
  problems: string[];
}

const cell = (text: string) => text.replaceAll('|', '\\|');

export function renderReadmeTable(r: Report): string {
  const rowFigures = r.figures.filter((f) => f.row !== null).sort((a, b) => a.row! - b.row!);
  const lines = ['| # | scenario | figure | measured | target | result |', '|---|---|---|---:|---|---|'];
  for (const f of rowFigures) {
    lines.push(`| ${f.row} | ${cell(ROWS[f.row!] ?? '')} | ${cell(f.figure)} | ${cell(formatValue(f))} | ${cell(f.target ?? '—')} | ${verdict(f)} |`);
  }
  const missing = Object.keys(ROWS).map(Number).filter((n) => !rowFigures.some((f) => f.row === n));
  const failedChecks = r.figures.filter((f) => f.row === null && f.pass === false).map((f) => `${f.scenario}: ${f.figure}`);
  const m = r.machine;
  const load = (l: number[]) => l.map((v) => v.toFixed(2)).join(' / ');
  const code = r.git?.commit ? `commit ${r.git.commit}${r.git.dirty ? ' with uncommitted changes' : ''}` : 'commit unknown';
  return [
    `Measured ${r.measuredAtUtc?.slice(0, 16).replace('T', ' ') ?? '(date unknown)'} UTC on ${code}: ${m.cores} cores, ${m.memoryGiB} GiB, ${m.cpuModel}, node ${m.node}; ` +
      `demo data scale ${r.options.scale} (${r.options.days} days before ${r.options.end}); load averages (1/5/15 min) ${load(r.load.before)} before, ${load(r.load.after)} after; ` +
      `whole bench ${(r.totalSeconds / 60).toFixed(1)} min.`,
    '',
    ...lines,
    '',
    missing.length ? `Rows not measured in this run: ${missing.join(', ')} (scenarios ${r.options.only.join(',')}).` : 'Every row measured in this run.',
    failedChecks.length || r.problems.length
      ? `Checks that failed (figures above are not trustworthy): ${[...failedChecks, ...r.problems].join('; ')}.`
      : 'Every consistency check held (row counts = X-Returned = DuckDB count, clean transfer ends, every status 200).',
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const file = argv[0];
  if (!file || argv.length > 1) {
    process.stderr.write('usage: node --import tsx bench/readme-table.ts REPORT.json   (written by npm run bench -- --json REPORT.json)\n');
    return 2;
  }
  const report = JSON.parse(await readFile(file, 'utf8')) as Report;
  process.stdout.write(renderReadmeTable(report) + '\n');
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
