import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { UsageError } from '../../shared/command-io.ts';
import { isScenarioName, SCENARIO_NAMES, SCENARIOS, type ScenarioName } from './scenario-names.ts';

export interface BenchOptions {
  scale: number;
  days: number;
  /** Exclusive last day of the data set, YYYY-MM-DD. */
  end: string;
  seed: number;
  dataDir: string;
  jsonPath: string | null;
  /** Directory for a V8 CPU profile of the server child, or null for a plain (measured) run. */
  cpuProfDir: string | null;
  /** The scenarios to run, in the bench's own order whatever order --only gave. */
  only: ScenarioName[];
  /** Keys issued into the bench's registry; small-windows gives connection i key i mod keys. */
  keys: number;
  /** small-windows' measured duration. */
  smallSeconds: number;
  /** aborts: the measured aborted extracts (its warm-up adds a tenth more). */
  aborts: number;
  /** slow-readers: each throttled year download's pace, bytes per second. */
  slowBytesPerSecond: number;
  /** throttled-year: the server's QUERY_TIMEOUT_MS; the download is paced to last 2.5 times as long. */
  yearTimeoutSeconds: number;
  /** overload: the concurrencies tried for the best goodput (10 times the best is then offered). */
  overloadLevels: number[];
  /** soak: requests in all (RSS is compared between a tenth of them and the end). */
  soakRequests: number;
}

/** A half-open window of whole UTC days, as the API takes it (`from=YYYY-MM-DD&to=...`). */
export interface DayWindow {
  from: string;
  to: string;
}

export const USAGE = `Usage: npm run bench -- [options]
  --scale S        demo data volume (default 10: about 5 M hotspots a year)
  --days N         days of data before --end (default 365)
  --end DAY        exclusive last day, YYYY-MM-DD (default 2026-01-01)
  --data-dir DIR   where the data set lives (default var/bench-data/scale-S, or -S-dN-eDAY if not the defaults)
  --json PATH      also write the result table as JSON
  --cpu-prof DIR   run the server under node --cpu-prof and print its top self-time functions
  --only NAMES     run only these scenarios, e.g. --only year-csv,small-windows (default: all)
  --keys N         keys issued with \`fire-api keys issue\` for small-windows and aborts (default 50)
  --small-seconds S  duration of small-windows (default 20)
  --aborts N       aborted extracts in aborts (default 1000)
  --slow-kb-s N    pace of each of slow-readers' throttled downloads, kB/s (default 1000: 1 MB/s)
  --year-timeout-s N  QUERY_TIMEOUT_MS of throttled-year's server, in seconds (default 30)
  --overload-levels LIST  overload's calibration concurrencies (default 10,25,50,100); e.g. 100 offers 1,000
  --soak-requests N  soak's requests (default 100000; RSS compared between the first tenth and the end)

Scenarios:
${SCENARIOS.map((s) => `  ${s.name.padEnd(20)} ${s.measures}`).join('\n')}
`;

/** The repository root: the bench runs the project's own CLI from there, whatever the working directory. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const DAY_MS = 86_400_000;
const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function parseDayText(text: string, name: string): number {
  const ms = Date.parse(`${text}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text) || Number.isNaN(ms) || dayText(ms) !== text) throw new UsageError(`--${name} must be YYYY-MM-DD`);
  return ms;
}

function positive(text: string | undefined, name: string, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${name} must be a positive number`);
  return n;
}

export function parseBenchArgs(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      scale: { type: 'string' },
      days: { type: 'string' },
      end: { type: 'string' },
      'data-dir': { type: 'string' },
      json: { type: 'string' },
      'cpu-prof': { type: 'string' },
      only: { type: 'string' },
      keys: { type: 'string' },
      'small-seconds': { type: 'string' },
      aborts: { type: 'string' },
      'slow-kb-s': { type: 'string' },
      'year-timeout-s': { type: 'string' },
      'overload-levels': { type: 'string' },
      'soak-requests': { type: 'string' },
    },
  });
  const scale = positive(values.scale, 'scale', 10);
  const days = Math.trunc(positive(values.days, 'days', 365));
  const end = values.end ?? '2026-01-01';
  parseDayText(end, 'end');
  // Non-default shapes get their own folder so they never overwrite (or pass for) the standard set.
  const suffix = days === 365 && end === '2026-01-01' ? '' : `-d${days}-e${end}`;
  return {
    scale,
    days,
    end,
    seed: 1,
    dataDir: values['data-dir'] ? path.resolve(values['data-dir']) : path.join(REPO_ROOT, `var/bench-data/scale-${scale}${suffix}`),
    jsonPath: values.json ? path.resolve(values.json) : null,
    cpuProfDir: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : null,
    only: parseOnly(values.only),
    keys: Math.trunc(positive(values.keys, 'keys', 50)),
    smallSeconds: positive(values['small-seconds'], 'small-seconds', 20),
    aborts: Math.trunc(positive(values.aborts, 'aborts', 1000)),
    slowBytesPerSecond: positive(values['slow-kb-s'], 'slow-kb-s', 1000) * 1000,
    yearTimeoutSeconds: positive(values['year-timeout-s'], 'year-timeout-s', 30),
    overloadLevels: overloadLevels(values['overload-levels']),
    soakRequests: Math.trunc(positive(values['soak-requests'], 'soak-requests', 100_000)),
  };
}

function overloadLevels(text: string | undefined): number[] {
  if (text === undefined) return [10, 25, 50, 100];
  const levels = text.split(',').map((t) => Number(t.trim()));
  if (levels.length === 0 || levels.some((n) => !Number.isInteger(n) || n <= 0)) throw new UsageError('--overload-levels takes whole numbers of connections, e.g. 10,25,50,100');
  return levels;
}

function parseOnly(text: string | undefined): ScenarioName[] {
  if (text === undefined) return [...SCENARIO_NAMES];
  const asked = text.split(',').map((t) => t.trim()).filter(Boolean);
  const unknown = asked.filter((name) => !isScenarioName(name.toLowerCase()));
  if (asked.length === 0 || unknown.length > 0) throw new UsageError(`--only takes scenario names among ${SCENARIO_NAMES.join(', ')}${unknown.length ? `; unknown: ${unknown.join(',')}` : ''}`);
  const names = new Set(asked.map((name) => name.toLowerCase()));
  return SCENARIO_NAMES.filter((name) => names.has(name));
}

/** The whole data set: year-csv and year-readings-csv read all of it. */
export function fullWindow(o: BenchOptions): DayWindow {
  const endMs = parseDayText(o.end, 'end');
  return { from: dayText(endMs - o.days * DAY_MS), to: o.end };
}

/**
 * month-geojson: the calendar month holding the middle of the data set, clipped to it.
 * For the standard year 2025 that is July, the busiest fire month; for a few days it is the days.
 */
export function monthWindow(o: BenchOptions): DayWindow {
  const full = fullWindow(o);
  const fromMs = Date.parse(`${full.from}T00:00:00Z`);
  const toMs = Date.parse(`${full.to}T00:00:00Z`);
  const mid = new Date(fromMs + Math.floor((toMs - fromMs) / DAY_MS / 2) * DAY_MS);
  const monthStart = Date.UTC(mid.getUTCFullYear(), mid.getUTCMonth(), 1);
  const monthEnd = Date.UTC(mid.getUTCFullYear(), mid.getUTCMonth() + 1, 1);
  return { from: dayText(Math.max(fromMs, monthStart)), to: dayText(Math.min(toMs, monthEnd)) };
}

/** window-sizes' one-day window: the middle day of the month window, so the day lies inside the month and the month inside the year. */
export function midMonthDayWindow(o: BenchOptions): DayWindow {
  const month = monthWindow(o);
  const fromMs = Date.parse(`${month.from}T00:00:00Z`);
  const days = (Date.parse(`${month.to}T00:00:00Z`) - fromMs) / DAY_MS;
  const dayMs = fromMs + Math.floor(days / 2) * DAY_MS;
  return { from: dayText(dayMs), to: dayText(dayMs + DAY_MS) };
}

/** A one-day window at the start of the data set: the warm-up request. */
export function firstDayWindow(o: BenchOptions): DayWindow {
  const full = fullWindow(o);
  return { from: full.from, to: dayText(Date.parse(`${full.from}T00:00:00Z`) + DAY_MS) };
}
