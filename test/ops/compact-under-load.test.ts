import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startServer, type ServerProcess } from '../../bench/server/server-process.ts';
import { issueKey } from '../../server/keys/key-admin.ts';
import { fireApi } from '../helpers/cli.ts';
import { tempDir } from '../helpers/fixtures.ts';
import { TEST_HOLDER } from '../helpers/server.ts';
import { allFiles, VIIRS_HEADER } from './ops-fixtures.ts';

const DAYS = 12;
const day = (i: number) => `2026-04-${String(i + 1).padStart(2, '0')}`;
const REQUESTS = [`/api/v1/hotspots?from=${day(0)}&to=${day(DAYS)}&format=csv`, `/api/v1/hotspots?from=${day(0)}&to=${day(DAYS)}`, `/api/v1/hotspots?from=${day(3)}&to=${day(5)}&format=csv`];

let dir: string;
let server: ServerProcess;
let headers: Record<string, string>;

/** One FIRMS CSV per late batch: every day gets new pixels, so each ingest adds one file to every partition. */
async function firmsBatch(batch: number): Promise<string> {
  const rows: string[] = [];
  for (let d = 0; d < DAYS; d++) {
    for (let i = 0; i < 600; i++) {
      const hhmm = `${String((i * 7) % 24).padStart(2, '0')}${String((i + batch) % 60).padStart(2, '0')}`;
      rows.push(`${(38 + batch + i / 1000).toFixed(4)},${(-8 - d / 100).toFixed(4)},${330 + (i % 30)},0.39,0.36,${day(d)},${hhmm},N,VIIRS,n,2.0NRT,290,${(i % 50) + 1},D`);
    }
  }
  const file = path.join(dir, `batch-${batch}.csv`);
  await writeFile(file, `${VIIRS_HEADER}\n${rows.join('\n')}\n`);
  return file;
}

/** The body as a reader compares it: GeoJSON without the fields allowed to change (age, data version). */
const comparable = (url: string, text: string) => (url.includes('format=csv') ? text : text.replace(/"ageSeconds":\d+/, '').replace(/"dataVersion":"[^"]+"/, ''));

type Outcome = 'same' | 'different' | 'cut' | '503' | `status ${number}`;

async function request(url: string, reference: ReadonlyMap<string, string>): Promise<Outcome> {
  const r = await fetch(`${server.baseUrl}${url}`, { headers });
  if (r.status === 503) return (await r.text(), '503');
  if (r.status !== 200) return `status ${r.status}`;
  let text: string;
  try {
    text = await r.text();
  } catch {
    return 'cut';
  }
  return comparable(url, text) === reference.get(url) ? 'same' : 'different';
}

beforeAll(async () => {
  dir = await tempDir('fire-api-compact-load-');
  const dataDir = path.join(dir, 'data');
  for (let batch = 0; batch < 3; batch++) {
    const r = await fireApi(['ingest', 'hotspots', '--data-dir', dataDir, await firmsBatch(batch)]);
    expect(r.code, r.stderr).toBe(0);
  }
  const keysFile = path.join(dir, 'keys.json');
  headers = { authorization: `Bearer ${(await issueKey(keysFile, TEST_HOLDER, 1)).key}` };
  const port = await freePort();
  server = await startServer({ DATA_DIR: dataDir, TEMP_DIR: path.join(dir, 'tmp'), KEYS_FILE: keysFile, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000', GROUP_ROWS: '2000' }, headers);
}, 120_000);
afterAll(() => server?.stop());

describe('fire-api compact and ingest beside a live server process', () => {
  it('never lets a request see a row twice or miss one: every complete 200 is byte-identical to before, the rest are 503s or cut transfers', async () => {
    const reference = new Map<string, string>();
    for (const url of REQUESTS) {
      const r = await fetch(`${server.baseUrl}${url}`, { headers });
      expect(r.status).toBe(200);
      reference.set(url, comparable(url, await r.text()));
    }
    expect(reference.get(REQUESTS[0]!)!.trim().split('\n')).toHaveLength(1 + 3 * DAYS * 600);
    let compacting = true;
    const during: Outcome[] = [];
    const compaction = fireApi(['compact', 'hotspots', '--data-dir', path.join(dir, 'data')]).finally(() => (compacting = false));
    const client = async (offset: number) => {
      for (let i = offset; compacting; i++) during.push(await request(REQUESTS[i % REQUESTS.length]!, reference));
    };
    await Promise.all([0, 1, 2, 3].map(client));
    const result = await compaction;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`rewrote ${DAYS} partitions \\(${3 * DAYS} files`));
    // Enough requests overlapped the compaction to have met it mid-way.
    expect(during.length).toBeGreaterThanOrEqual(8);
    expect(during.filter((o) => !['same', 'cut', '503'].includes(o))).toEqual([]);
    for (const url of REQUESTS) expect(await request(url, reference)).toBe('same');
    expect((await allFiles(path.join(dir, 'data/hotspots'))).every((f) => /\/compacted-[0-9a-f]{16}\.parquet$/.test(f))).toBe(true);
  }, 180_000);

  it('an ingest beside it adds each day whole or not at all: every response holds 1,800 or 2,400 rows of a day, never a part of the new file', async () => {
    const batch = await firmsBatch(3);
    let ingesting = true;
    const perDay: number[] = [];
    const ingestion = fireApi(['ingest', 'hotspots', '--data-dir', path.join(dir, 'data'), batch]).finally(() => (ingesting = false));
    const client = async () => {
      while (ingesting) {
        const r = await fetch(`${server.baseUrl}${REQUESTS[0]}`, { headers });
        if (r.status !== 200) continue;
        const text = await r.text().catch(() => null);
        if (text === null) continue;
        const days = new Map<string, number>();
        for (const line of text.trim().split('\n').slice(1)) days.set(line.split(',')[2]!.slice(0, 10), (days.get(line.split(',')[2]!.slice(0, 10)) ?? 0) + 1);
        perDay.push(...days.values());
      }
    };
    await Promise.all([client(), client(), client()]);
    const result = await ingestion;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`wrote ${(DAYS * 600).toLocaleString('en-US')} rows in ${DAYS} files`));
    expect(perDay.length).toBeGreaterThanOrEqual(DAYS);
    expect(perDay.filter((n) => n !== 1800 && n !== 2400)).toEqual([]);
    const after = await (await fetch(`${server.baseUrl}${REQUESTS[0]}`, { headers })).text();
    expect(after.trim().split('\n')).toHaveLength(1 + 4 * DAYS * 600);
  }, 180_000);
});
