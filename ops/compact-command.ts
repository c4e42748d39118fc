import { parseArgs } from 'node:util';
import { parseCommandArgs, processIo, UsageError, type ClientIo } from '../shared/command-io.ts';
import { parseInstant } from '../queries/instant.ts';
import { ALL_TIME } from '../queries/window.ts';
import { compact, type CompactOptions, type CompactSummary } from './compact.ts';
import { busyExit, count, dataDirFrom, datasetNamed, statusLine } from './ops-io.ts';

export const COMPACT_USAGE = `Usage: fire-api compact <dataset> [options]
  --data-dir DIR      dataset root (default DATA_DIR)
  --from A --to B     only partitions overlapping [A, B) (dates or timestamps, UTC)
  --dry-run           say which partitions would be rewritten, write nothing
  --json              the summary as JSON on stdout
Rewrites each partition holding several files (or one file not stored in order) as one file
sorted by the order key. Safe beside a running server: the new file replaces the old ones for
every listing from the moment it appears; the old ones are deleted after.
Exit code: 0 done, 1 a partition holds a failing file (left as it is), 2 usage.
`;

function parseCompactArgs(args: string[], env: NodeJS.ProcessEnv): CompactOptions & { json: boolean } {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { 'data-dir': { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, 'dry-run': { type: 'boolean' }, json: { type: 'boolean' } },
  });
  if (positionals.length > 1) throw new UsageError(`compact takes one dataset, got ${positionals.join(' ')}`);
  const dataset = datasetNamed(positionals[0], 'compact');
  const bound = (name: 'from' | 'to', fallback: bigint) => {
    const text = values[name];
    if (text === undefined) return fallback;
    const t = parseInstant(text);
    if (t === null) throw new UsageError(`--${name} is not a date or timestamp: ${text}`);
    return t;
  };
  const window = values.from === undefined && values.to === undefined ? null : { from: bound('from', ALL_TIME.from), to: bound('to', ALL_TIME.to) };
  if (window && window.from >= window.to) throw new UsageError('--from must be before --to');
  if (window && !dataset.time) throw new UsageError(`${dataset.name} has no time partitions: --from/--to do not apply`);
  return { dataDir: dataDirFrom(values['data-dir'], env), dataset, window, dryRun: values['dry-run'] === true, json: values.json === true };
}

function printSummary(io: ClientIo, s: CompactSummary): void {
  const compacted = s.partitions.flatMap((p) => (p.state === 'compacted' ? [p] : []));
  const failing = s.partitions.flatMap((p) => (p.state === 'failing' ? [p] : []));
  for (const p of failing) io.stderr.write(`${s.dataset}/${p.dir}: not compacted: ${p.problem}\n`);
  const files = compacted.reduce((n, p) => n + p.files, 0);
  const rows = compacted.reduce((n, p) => n + p.rows, 0);
  const seconds = compacted.reduce((n, p) => n + p.seconds, 0);
  const verb = s.dryRun ? 'would rewrite' : 'rewrote';
  const timing = s.dryRun || compacted.length === 0 ? '' : ` in ${seconds.toFixed(1)} s (${(seconds / compacted.length).toFixed(2)} s per partition)`;
  io.stdout.write(
    `${s.dataset}${s.dryRun ? ' (dry run)' : ''}: ${verb} ${compacted.length} partitions (${count(files)} files, ${count(rows)} rows) as one sorted file each${timing}; ` +
      `${s.partitions.length - compacted.length - failing.length} already compact, ${failing.length} failing` +
      `${s.leftoversRemoved ? `; removed ${s.leftoversRemoved} files an interrupted compaction had replaced` : ''}\n`,
  );
}

/** `fire-api compact`: 0 done, 1 some partition holds a failing file, 2 usage. */
export async function compactCommand(args: string[], env: NodeJS.ProcessEnv, io: ClientIo = processIo()): Promise<number> {
  const opts = parseCommandArgs(io, 'compact', COMPACT_USAGE, args, () => parseCompactArgs(args, env));
  if (typeof opts === 'number') return opts;
  const status = statusLine(io);
  const summary = await compact(opts, (done, total) => status.draw(`compact ${opts.dataset.name}: ${done}/${total} partitions`)).catch((e: unknown) => busyExit(io, 'compact', e));
  status.clear();
  if (typeof summary === 'number') return summary;
  if (opts.json) io.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  else printSummary(io, summary);
  return summary.partitions.some((p) => p.state === 'failing') ? 1 : 0;
}
