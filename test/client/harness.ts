import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ClientIo } from '../../client/io.ts';
import { Manifest } from '../../client/manifest.ts';
import { writeBulkHotspots } from '../helpers/parquet.ts';
import type { TestServer } from '../helpers/server.ts';

export const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** In-memory stdout/stderr for calling the commands in-process. */
export function captureIo(): { io: ClientIo; stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  const io: ClientIo = { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) }, stderrIsTTY: false };
  return { io, stdout: () => out, stderr: () => err };
}

/** Arguments of `fire-api extract hotspots` against `server`. */
export const extractArgs = (server: TestServer, out: string, from: string, to: string, extra: string[] = []): string[] => [
  'hotspots', '--from', from, '--to', to, '--out', out, '--base-url', server.url, '--key', server.key, ...extra,
];

/** `fire_api_responses_total` of the hotspots route with `status`, from the server's own /metrics. */
export async function responses(server: TestServer, status: number): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`fire_api_responses_total{route="/api/v1/hotspots",status="${status}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

export const readManifestFile = async (file: string): Promise<Manifest> => Manifest.parse(JSON.parse(await readFile(file, 'utf8')));

/** Two days of detections, seven per instant a minute apart: `day1 + day2` rows, cuts inside and across days. */
export async function writeTwoDays(dir: string, day1 = 1200, day2 = 800): Promise<number> {
  await writeBulkHotspots(path.join(dir, 'hotspots/date=2025-07-01/part-0.parquet'), '2025-07-01', day1, 7, 60);
  await writeBulkHotspots(path.join(dir, 'hotspots/date=2025-07-02/part-0.parquet'), '2025-07-02', day2, 7, 60);
  return day1 + day2;
}
