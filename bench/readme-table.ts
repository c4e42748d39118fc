// Prints the bench table of docs/figures.md (markdown) from a bench report:
//   node --import tsx bench/readme-table.ts var/bench.json
// so the table in docs/figures.md is always a measured one, never typed by hand.
import { readFile } from 'node:fs/promises';
import { SCENARIO_NAMES, SCENARIOS } from './lib/scenario-names.ts';
import { formatValue, verdict, type Figure, type Machine } from './measure/table.ts';

const MEASURES = new Map<string, string>(SCENARIOS.map((s) => [s.name, s.measures]));

interface Report {
  measuredAtUtc?: string;
  machine: Machine;
  git?: { commit: string | null; dirty: boolean | null };
  options: { scale: number; days: number; end: string };
  figures: Figure[];
  load: { before: number[]; after: number[] };
  totalSeconds: number;
  problems: string[];
}

const cell = (text: string) => text.replaceAll('|', '\\|');

export function renderReadmeTable(r: Report): string {
  const order = (f: Figure) => SCENARIO_NAMES.findIndex((name) => name === f.scenario);
  // A stable sort: each scenario's figures stay in the order the bench printed them.
  const headlines = r.figures.filter((f) => f.headline).sort((a, b) => order(a) - order(b));
  const lines = ['| scenario | what it measures | figure | measured | target | result |', '|---|---|---|---:|---|---|'];
  for (const f of headlines) {
    lines.push(`| ${f.scenario} | ${cell(MEASURES.get(f.scenario) ?? '')} | ${cell(f.figure)} | ${cell(formatValue(f))} | ${cell(f.target ?? '—')} | ${verdict(f)} |`);
  }
  const missing = SCENARIO_NAMES.filter((name) => !headlines.some((f) => f.scenario === name));
  const failedChecks = r.figures.filter((f) => !f.headline && f.pass === false).map((f) => `${f.scenario}: ${f.figure}`);
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
    missing.length ? `Scenarios not measured in this run: ${missing.join(', ')}.` : 'Every scenario measured in this run.',
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
