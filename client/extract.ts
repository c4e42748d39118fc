import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { parseCommandArgs } from '../shared/command-io.ts';
import { EXTRACT_USAGE, parseExtractArgs, type ExtractOptions } from './args.ts';
import { extractPaths, finishExtract, type ExtractPaths } from './assemble.ts';
import { ClientError } from './errors.ts';
import { HttpClient } from './pages/http-page.ts';
import { processIo, USER_AGENT, type ClientIo } from './io.ts';
import { checkPage, fetchPage } from './extract-page.ts';
import type { ExtractRun } from './extract-run.ts';
import { fileSize, OutputFile } from './output-file.ts';
import { Progress } from './progress.ts';
import { describeIdentity, loadState, newState, rowsDone, sameIdentity, saveState, type Identity, type ResumeState } from './resume-state.ts';

const identityOf = (o: ExtractOptions): Identity => ({ service: o.service, dataset: o.dataset, format: o.format, from: o.from, to: o.to, parameters: o.parameters });

/** extract's exit code when it failed (completed windows are kept for a resume). */
export const EXTRACT_FAILED = 1;

/** `fire-api extract`: 0 done, 1 failed (completed windows kept for a resume), 2 usage. */
export async function extractCommand(args: string[], env: NodeJS.ProcessEnv, io: ClientIo = processIo()): Promise<number> {
  const opts = parseCommandArgs(io, 'extract', EXTRACT_USAGE, args, () => parseExtractArgs(args, env));
  if (typeof opts === 'number') return opts;
  const client = new HttpClient(opts.key, `${USER_AGENT} extract`);
  try {
    await runExtract(opts, client, io);
    return 0;
  } catch (e) {
    if (!(e instanceof ClientError)) throw e;
    io.stderr.write(`fire-api extract: ${e.message}\n`);
    return EXTRACT_FAILED;
  } finally {
    client.close();
  }
}

async function runExtract(opts: ExtractOptions, client: HttpClient, io: ClientIo): Promise<void> {
  const paths = extractPaths(path.resolve(opts.out));
  if (!opts.force && existsSync(paths.out)) throw new ClientError(`${opts.out} already exists; choose another --out or pass --force to replace it`);
  const { state, out } = await openRun(opts, paths, io);
  const progress = new Progress(io, opts.dataset, rowsDone(state), state.pages.length);
  const run: ExtractRun = { opts, paths, client, state, out, progress };
  try {
    while (!walkDone(state)) await nextPage(run);
    await out.sync();
  } catch (e) {
    if (e instanceof ClientError && state.pages.length > 0) {
      e.message += `\n${state.pages.length} completed windows are kept; run the same command again to resume.`;
    }
    throw e;
  } finally {
    await out.close();
    // Nothing completed means nothing to resume: leave no stray partial file behind.
    if (state.pages.length === 0) await rm(paths.partial, { force: true });
  }
  const manifest = await finishExtract(state, paths);
  progress.finish(`wrote ${opts.out}: ${manifest.rows.toLocaleString('en-US')} rows from ${manifest.pages.length} windows; manifest ${path.basename(paths.manifest)}`);
}

const walkDone = (s: ResumeState): boolean => s.pages.length > 0 && s.pages.at(-1)!.nextFrom === null;

/** Resumes the run recorded in the state file, or starts a fresh one. */
async function openRun(opts: ExtractOptions, paths: ExtractPaths, io: ClientIo): Promise<{ state: ResumeState; out: OutputFile }> {
  const identity = identityOf(opts);
  if (opts.restart) await rm(paths.state, { force: true });
  const saved = await loadState(paths.state);
  if (saved && !sameIdentity(saved.identity, identity)) {
    throw new ClientError(`${paths.state} belongs to another extract (${describeIdentity(saved.identity)}); repeat its arguments to resume it, or pass --restart`);
  }
  const keep = saved?.pages.at(-1)?.endOffset ?? 0;
  if (saved && ((await fileSize(paths.partial)) ?? -1) < keep) {
    throw new ClientError(`${paths.partial} is shorter than its resume state records; pass --restart to start over`);
  }
  if (saved) {
    const last = saved.pages.at(-1)!;
    io.stderr.write(`resuming: ${saved.pages.length} windows (${rowsDone(saved)} rows) already done${last.nextFrom ? `, continuing from ${last.nextFrom}` : ''}\n`);
  }
  return { state: saved ?? newState(identity), out: await OutputFile.open(paths.partial, keep) };
}

/** Fetches the window after the last completed one, then records it: output synced first, state second. */
async function nextPage(run: ExtractRun): Promise<void> {
  const { state, out } = run;
  const from = state.pages.at(-1)?.nextFrom ?? state.identity.from;
  const startOffset = out.size;
  const page = await fetchPage(run, from);
  try {
    checkPage(state, page);
  } catch (e) {
    await out.truncate(startOffset);
    throw e;
  }
  await out.sync();
  state.pages.push({ ...page.record, endOffset: out.size });
  state.rowLimit ??= page.rowLimit;
  state.csvHeader ??= page.csvHeader;
  state.query ??= page.query;
  await saveState(run.paths.state, state);
  run.progress.windowDone(page.record.returned);
}
