import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseCommandArgs, processIo, UsageError, type ClientIo } from '../../shared/command-io.ts';
import { busyExit, count, dataDirFrom, datasetNamed, statusLine } from '../ops-io.ts';
import { ingest, type IngestOptions, type IngestSummary } from './ingest.ts';
import { SOURCE_TYPES } from './sources.ts';

export const INGEST_USAGE = `Usage: fire-api ingest <dataset> [options] FILE...
  --data-dir DIR     dataset root (default DATA_DIR)
  --product ID       hotspots: FIRMS product id for every row (default: from satellite, instrument, version)
  --skip-bad-rows    write the good rows even when some rows are bad (they are reported either way)
  --dry-run          read, check and count, write nothing
  --json             the summary as JSON on stdout
Sources: ${Object.entries(SOURCE_TYPES).map(([d, types]) => `${d} ${types.join(' ')}`).join('; ')}.
Rows already present (same id, or same order key) are not written again. Each partition touched
gets its new rows as one file sorted by the order key, renamed into place when complete.
Exit code: 0 done, 1 bad rows or unreadable files (nothing written without --skip-bad-rows), 2 usage.
`;

const SHOWN_BAD_ROWS = 20;

function parseIngestArgs(args: string[], env: NodeJS.ProcessEnv): IngestOptions & { json: boolean } {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { 'data-dir': { type: 'string' }, product: { type: 'string' }, 'skip-bad-rows': { type: 'boolean' }, 'dry-run': { type: 'boolean' }, json: { type: 'boolean' } },
  });
  const [name, ...files] = positionals;
  const dataset = datasetNamed(name, 'ingest');
  if (files.length === 0) throw new UsageError('ingest needs at least one source FILE');
  if (values.product !== undefined && (dataset.name !== 'hotspots' || !/^[A-Z0-9_]+$/.test(values.product))) throw new UsageError('--product takes a FIRMS product id (e.g. VIIRS_NOAA20_NRT), for hotspots only');
  return {
    dataDir: dataDirFrom(values['data-dir'], env),
    dataset,
    files: files.map((f) => path.resolve(f)),
    product: values.product,
    skipBadRows: values['skip-bad-rows'] === true,
    dryRun: values['dry-run'] === true,
    json: values.json === true,
  };
}

function printSummary(io: ClientIo, s: IngestSummary, skipBadRows: boolean): void {
  for (const b of s.badRows.slice(0, SHOWN_BAD_ROWS)) io.stderr.write(`${b.file}${b.line === null ? '' : `:${b.line}`}: ${b.problem}\n`);
  if (s.badRowCount > SHOWN_BAD_ROWS) io.stderr.write(`... and ${count(s.badRowCount - SHOWN_BAD_ROWS)} more bad rows\n`);
  if (s.stopped) {
    const what = s.partitions.length === 0 ? 'nothing written' : `stopped after writing ${count(s.rowsWritten)} rows`;
    io.stdout.write(`${s.dataset}: ${what}: ${s.stopped}; ${count(s.rowsRead)} rows read, ${count(s.badRowCount)} bad\n`);
    return;
  }
  const verb = s.dryRun ? 'would write' : 'wrote';
  const files = s.partitions.filter((p) => p.file !== null || (s.dryRun && p.rows > p.present)).length;
  io.stdout.write(
    `${s.dataset}${s.dryRun ? ' (dry run)' : ''}: ${count(s.rowsRead)} rows read, ${count(s.badRowCount)} bad${skipBadRows && s.badRowCount ? ' (skipped)' : ''}, ` +
      `${count(s.repeatedInInput)} repeated in the input, ${count(s.alreadyPresent)} already present; ` +
      `${verb} ${count(s.rowsWritten)} rows in ${files} files, ${s.partitions.length} partitions touched\n`,
  );
}

/** `fire-api ingest`: 0 done, 1 bad rows or unreadable sources, 2 usage. */
export async function ingestCommand(args: string[], env: NodeJS.ProcessEnv, io: ClientIo = processIo()): Promise<number> {
  const opts = parseCommandArgs(io, 'ingest', INGEST_USAGE, args, () => parseIngestArgs(args, env));
  if (typeof opts === 'number') return opts;
  const status = statusLine(io);
  const started = Date.now();
  const summary = await ingest(opts, (p) =>
    status.draw(`ingest ${opts.dataset.name}: ${count(p.rowsRead)} rows, ${p.filesRead}/${opts.files.length} files, ${p.partitionsDone}/${p.partitions} partitions written`),
  ).catch((e: unknown) => busyExit(io, 'ingest', e));
  status.clear();
  if (typeof summary === 'number') return summary;
  if (opts.json) io.stdout.write(`${JSON.stringify({ ...summary, seconds: (Date.now() - started) / 1000 }, null, 2)}\n`);
  else printSummary(io, summary, opts.skipBadRows);
  return summary.stopped ? 1 : 0;
}
