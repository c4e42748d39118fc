import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { tempDir } from '../helpers/fixtures.ts';
import { fireApi, type CliResult } from '../helpers/cli.ts';

/** How one client saw one 200 (or not): did it end cleanly, and with how many of the promised rows. */
export interface Outcome {
  client: string;
  status: number;
  /** X-Returned, or null when the answer had none. */
  promised: number | null;
  /** Complete CSV records after the header line. */
  rows: number;
  /** The client reported a complete transfer (curl exit 0, fetch's body read without error). */
  clean: boolean;
  detail: string;
}

const records = (body: Buffer): number => Math.max(0, body.toString('latin1').split('\n').length - 2);

function promisedRows(headers: string): number | null {
  const m = /^x-returned:\s*(\d+)/im.exec(headers);
  return m ? Number(m[1]) : null;
}

/** curl as a researcher runs it: its exit code says whether the transfer was complete (18: partial). */
export async function curlGet(url: string, key: string, extra: readonly string[] = []): Promise<Outcome & { body: Buffer; headers: string }> {
  const dir = await tempDir('fire-api-curl-');
  const [head, out] = [path.join(dir, 'headers'), path.join(dir, 'body')];
  const args = ['-sS', '-D', head, '-o', out, '-H', `Authorization: Bearer ${key}`, ...extra, url];
  const code = await new Promise<number>((resolve) => execFile('curl', args, { timeout: 60_000 }, (e) => resolve(e ? Number((e as { code?: number }).code ?? 1) : 0)));
  const headers = await readFile(head, 'latin1').catch(() => '');
  const body = await readFile(out).catch(() => Buffer.alloc(0));
  const status = Number(/^HTTP\/[\d.]+ (\d{3})/m.exec(headers)?.[1] ?? 0);
  return { client: 'curl', status, promised: promisedRows(headers), rows: records(body), clean: code === 0, detail: `curl exit ${code}`, body, headers };
}

/**
 * Node's fetch: a broken transfer rejects while the body is read. It asks for gzip by itself and
 * decodes it; `identity` keeps the body as it is, so byte offsets into it mean what they say.
 */
export async function fetchGet(url: string, key: string, encoding: 'identity' | 'gzip' = 'identity'): Promise<Outcome> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}`, 'accept-encoding': encoding } });
  const promised = res.headers.get('x-returned');
  const chunks: Buffer[] = [];
  let detail = 'body read to its end';
  let clean = true;
  try {
    for await (const chunk of res.body!) chunks.push(Buffer.from(chunk));
  } catch (e) {
    clean = false;
    detail = `body read failed: ${(e as Error).message} (${String((e as { cause?: unknown }).cause)})`;
  }
  return { client: 'fetch', status: res.status, promised: promised === null ? null : Number(promised), rows: records(Buffer.concat(chunks)), clean, detail };
}

export interface ExtractRun extends CliResult {
  /** SHA-256 of the file written, null when none was. */
  sha256: string | null;
  /** The SHA-256 the manifest records for it. */
  manifestSha256: string | null;
}

/** `fire-api extract` as docs/reproducing.md shows it, the key from FIRE_API_KEY. */
export async function extract(baseUrl: string, key: string, window: { from: string; to: string }): Promise<ExtractRun> {
  const out = path.join(await tempDir('fire-api-extract-'), 'hotspots.csv');
  const result = await fireApi(['extract', 'hotspots', '--from', window.from, '--to', window.to, '--out', out, '--base-url', baseUrl], { FIRE_API_KEY: key });
  const file = await readFile(out).catch(() => null);
  const manifest = await readFile(`${out}.manifest.json`, 'utf8').catch(() => null);
  return {
    ...result,
    sha256: file && createHash('sha256').update(file).digest('hex'),
    manifestSha256: manifest && (JSON.parse(manifest) as { file: { sha256: string } }).file.sha256,
  };
}
