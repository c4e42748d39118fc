import path from 'node:path';
import { parseCommandArgs } from '../../shared/command-io.ts';
import { parseVerifyArgs, VERIFY_USAGE, type VerifyOptions } from '../args.ts';
import { ClientError } from '../errors.ts';
import { HttpClient } from '../pages/http-page.ts';
import { processIo, USER_AGENT, type ClientIo } from '../io.ts';
import { readManifest, type Manifest, type PageRecord } from '../manifest.ts';
import { sha256File } from '../output-file.ts';
import { acceptOf, discardSink, pageUrl, readPage, sameQuery, type PageResult } from '../pages/page-request.ts';
import { retryMessage } from '../progress.ts';
import { withRetries } from '../retry.ts';
import { printReport, type FileCheck, type WindowCheck } from './verify-report.ts';

/** verify's exit code when it could not verify (the service, the manifest, or a fault of its own). */
export const COULD_NOT_VERIFY = 3;

/** `fire-api verify`: 0 every window identical, 1 something changed, 2 usage, 3 could not verify. */
export async function verifyCommand(args: string[], env: NodeJS.ProcessEnv, io: ClientIo = processIo()): Promise<number> {
  const opts = parseCommandArgs(io, 'verify', VERIFY_USAGE, args, () => parseVerifyArgs(args, env));
  if (typeof opts === 'number') return opts;
  const client = new HttpClient(opts.key, `${USER_AGENT} verify`);
  try {
    const manifest = await readManifest(opts.manifest);
    const service = opts.service ?? manifest.service;
    const windows: WindowCheck[] = [];
    for (const page of manifest.pages) windows.push(await checkWindow(client, manifest, service, page, opts, io));
    const file = await checkFile(manifest, opts.manifest);
    printReport(io, { manifest: opts.manifest, service, windows, file }, opts.json);
    return windows.every((w) => w.identical) && file.state !== 'differs' ? 0 : 1;
  } catch (e) {
    if (!(e instanceof ClientError)) throw e;
    io.stderr.write(`fire-api verify: could not verify: ${e.message}\n`);
    return COULD_NOT_VERIFY;
  } finally {
    client.close();
  }
}

/** Re-requests one recorded window with the very same URL and compares rows, truncation and columns. */
async function checkWindow(client: HttpClient, m: Manifest, service: string, page: PageRecord, opts: VerifyOptions, io: ClientIo): Promise<WindowCheck> {
  const url = pageUrl({ service, dataset: m.dataset, format: m.format, from: page.request?.from ?? null, to: page.request?.to ?? null, parameters: m.parameters });
  const what = page.request ? `window ${page.index + 1} (from ${page.request.from})` : 'the registry';
  const now = await withRetries(what, opts.retry, () => client.get(url, (res) => readPage(res, m.format, discardSink()), acceptOf(m.format)), (n) => io.stderr.write(`${retryMessage(what, n)}\n`));
  const differences = compare(m, page, now);
  return {
    index: page.index,
    request: page.request,
    identical: differences.length === 0,
    dataVersionChanged: now.dataVersion !== page.dataVersion,
    differences,
    recorded: { returned: page.returned, nextFrom: page.nextFrom, dataVersion: page.dataVersion, rowsSha256: page.rowsSha256 },
    now: { returned: now.returned, nextFrom: now.nextFrom, dataVersion: now.dataVersion, rowsSha256: now.rowsSha256 },
  };
}

function compare(m: Manifest, page: PageRecord, now: PageResult): string[] {
  const out: string[] = [];
  if (now.returned !== page.returned) out.push(`rows ${page.returned} -> ${now.returned}`);
  if (now.rowsSha256 !== page.rowsSha256) out.push('row content differs');
  if (now.truncated !== page.truncated || now.nextFrom !== page.nextFrom) out.push(`next ${page.nextFrom ?? 'none'} -> ${now.nextFrom ?? 'none'}`);
  if (m.csvHeader !== null && now.csvHeader !== m.csvHeader) out.push('CSV columns differ');
  if (m.queryInEffect !== null && !sameQuery(now.query, m.queryInEffect)) out.push('parameters in effect differ');
  return out;
}

/** The local file, when it sits next to the manifest, must still be the one the manifest describes. */
async function checkFile(m: Manifest, manifestPath: string): Promise<FileCheck> {
  const file = path.join(path.dirname(manifestPath), m.file.name);
  try {
    const { sha256 } = await sha256File(file);
    return { path: file, state: sha256 === m.file.sha256 ? 'matches' : 'differs' };
  } catch {
    return { path: file, state: 'missing' };
  }
}
