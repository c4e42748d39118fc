import { copyFile, mkdir, rename } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burntAreas } from '../../datasets/burnt-areas.ts';
import { fireDanger } from '../../datasets/fire-danger.ts';
import { hotspots } from '../../datasets/hotspots.ts';
import { sensorStations } from '../../datasets/sensor-stations.ts';
import { extractCommand } from '../../client/extract.ts';
import { verifyCommand } from '../../client/verify/verify.ts';
import { captureIo, extractArgs } from '../client/harness.ts';
import { burnt } from '../queries/sql/compile-fixtures.ts';
import { fireApi } from '../helpers/cli.ts';
import { dangerRow, hotspot, station, tempDir } from '../helpers/fixtures.ts';
import { writeBulkHotspots, writeParquet } from '../helpers/parquet.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { allFiles, checkPartition } from './ops-fixtures.ts';

const REQUESTS = [
  '/api/v1/hotspots?from=2026-05-01&to=2026-05-04',
  '/api/v1/burnt-areas?from=2026-05-01&to=2026-06-01',
  '/api/v1/fire-danger?from=2026-05-01&to=2026-06-01&model=m1',
  '/api/v1/sensor-stations',
];

let dataDir: string;
let server: TestServer;
const before = new Map<string, { body: string; dataVersion: string | null }>();
const p = (...parts: string[]) => path.join(dataDir, ...parts);

/** The response as a reader compares it: GeoJSON without the two fields allowed to differ (age, data version). */
async function fetchBody(url: string): Promise<{ body: string; dataVersion: string | null }> {
  const r = await server.get(url);
  expect(r.status).toBe(200);
  const text = await r.text();
  const body = url.includes('format=csv') ? text : text.replace(/"ageSeconds":\d+/, '"ageSeconds":0').replace(/"dataVersion":"[^"]+"/, '"dataVersion":""');
  return { body, dataVersion: r.headers.get('x-data-version') ?? /"dataVersion":"([^"]+)"/.exec(text)?.[1] ?? null };
}

const allRequests = () => REQUESTS.flatMap((u) => [u, `${u}${u.includes('?') ? '&' : '?'}format=csv`]);

async function writeData(): Promise<void> {
  // Late arrivals: a shuffled bulk file and a small late file in one day, two files in another, one sorted file in a third.
  await writeBulkHotspots(p('hotspots/date=2026-05-01/bulk.parquet'), '2026-05-01', 3000, 3, 7, 'shuffled');
  await writeParquet(p('hotspots/date=2026-05-01/late.parquet'), hotspots, [hotspot('late-2', '2026-05-01T03:00:00Z'), hotspot('late-1', '2026-05-01T00:00:00Z', { country: null })]);
  await writeParquet(p('hotspots/date=2026-05-02/a.parquet'), hotspots, [hotspot('b', '2026-05-02T10:00:00Z'), hotspot('a', '2026-05-02T10:00:00Z')]);
  await writeParquet(p('hotspots/date=2026-05-02/b.parquet'), hotspots, [hotspot('c', '2026-05-02T09:00:00Z')]);
  await writeParquet(p('hotspots/date=2026-05-03/one.parquet'), hotspots, [hotspot('d', '2026-05-03T09:00:00Z')]);
  await writeParquet(p('burnt-areas/month=2026-05/a.parquet'), burntAreas, [burnt(7, '2026-05-20T00:00:00Z'), burnt(5, '2026-05-02T00:00:00Z', { COMMUNE: 'Leiria, "centro"' })]);
  await writeParquet(p('burnt-areas/month=2026-05/b.parquet'), burntAreas, [burnt(6, '2026-05-02T00:00:00Z', { FINALDATE: '2026-05-09T00:00:00Z' })]);
  await writeParquet(p('fire-danger/model=m1/month=2026-05/a.parquet'), fireDanger, [dangerRow('2026-05-02T00:00:00Z', 'm1', 'country', 'PT'), dangerRow('2026-05-01T00:00:00Z', 'm1', 'country', 'ES')]);
  await writeParquet(p('fire-danger/model=m1/month=2026-05/b.parquet'), fireDanger, [dangerRow('2026-05-01T00:00:00Z', 'm1', 'country', 'PT', { FWI: null })]);
  await writeParquet(p('sensor-stations/a.parquet'), sensorStations, [station('S2'), station('S9', { simulated: true })]);
  await writeParquet(p('sensor-stations/b.parquet'), sensorStations, [station('S1', { name: null })]);
}

beforeAll(async () => {
  dataDir = await tempDir('fire-api-compact-');
  await writeData();
  server = await startServer(dataDir);
  for (const url of allRequests()) before.set(url, await fetchBody(url));
});
afterAll(() => server?.close());

describe('fire-api compact', () => {
  let manifest: string;
  const compact = (dataset: string, ...args: string[]) => fireApi(['compact', dataset, '--data-dir', dataDir, ...args]);

  it('rewrites each partition of several files, or of one unsorted file, as one file the server checks as stored in order', async () => {
    const out = path.join(await tempDir('fire-api-compact-extract-'), 'fires.csv');
    expect(await extractCommand(extractArgs(server, out, '2026-05-01', '2026-05-04'), {}, captureIo().io)).toBe(0);
    manifest = `${out}.manifest.json`;
    const r = await compact('hotspots');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^hotspots: rewrote 2 partitions \(4 files, 3,005 rows\) as one sorted file each in [\d.]+ s \([\d.]+ s per partition\); 1 already compact, 0 failing\n$/);
    for (const other of ['burnt-areas', 'fire-danger', 'sensor-stations']) expect((await compact(other)).code).toBe(0);
    expect(await allFiles(p('hotspots'))).toEqual([
      expect.stringMatching(/^date=2026-05-01\/compacted-[0-9a-f]{16}\.parquet$/),
      expect.stringMatching(/^date=2026-05-02\/compacted-[0-9a-f]{16}\.parquet$/),
      'date=2026-05-03/one.parquet',
    ]);
    for (const [d, dir] of [[hotspots, 'date=2026-05-01'], [hotspots, 'date=2026-05-02'], [burntAreas, 'month=2026-05'], [fireDanger, 'model=m1/month=2026-05']] as const) {
      expect(await checkPartition(dataDir, d, dir)).toEqual([expect.objectContaining({ ok: true, sorted: true })]);
    }
    expect(await allFiles(p('sensor-stations'))).toEqual([expect.stringMatching(/^compacted-[0-9a-f]{16}\.parquet$/)]);
    expect((await compact('hotspots')).stdout).toMatch(/rewrote 0 partitions .* 3 already compact/);
  }, 120_000);

  it('leaves every response byte-identical (GeoJSON but ageSeconds and dataVersion), with a new data version', async () => {
    for (const url of allRequests()) {
      const now = await fetchBody(url);
      expect(now.body, url).toBe(before.get(url)!.body);
      expect(now.dataVersion, url).not.toBe(before.get(url)!.dataVersion);
    }
  }, 120_000);

  it('fire-api verify reports the extract "rows identical, data version changed" and exits 0', async () => {
    const cap = captureIo();
    expect(await verifyCommand([manifest], { FIRE_API_KEY: server.key }, cap.io)).toBe(0);
    expect(cap.stdout()).toMatch(/: rows identical, data version changed \(sha256:/);
    expect(cap.stdout()).toMatch(/windows: all identical \(rows identical, data version changed in \d+\)/);
  }, 120_000);

  it('after an interrupted compaction (replaced files still there) serves no row twice, and the next run deletes them', async () => {
    const saved = await tempDir('fire-api-compact-saved-');
    await writeParquet(path.join(saved, 'x.parquet'), hotspots, [hotspot('x', '2026-05-03T10:00:00Z')]);
    await copyFile(p('hotspots/date=2026-05-03/one.parquet'), path.join(saved, 'one.parquet'));
    await rename(path.join(saved, 'x.parquet'), p('hotspots/date=2026-05-03/x.parquet'));
    expect((await compact('hotspots', '--from', '2026-05-03', '--to', '2026-05-04')).code).toBe(0);
    // Put the replaced file back, as if the compactor had stopped between its rename and its deletes.
    await copyFile(path.join(saved, 'one.parquet'), p('hotspots/date=2026-05-03/_one.parquet'));
    await rename(p('hotspots/date=2026-05-03/_one.parquet'), p('hotspots/date=2026-05-03/one.parquet'));
    const csv = (await (await server.get('/api/v1/hotspots?from=2026-05-03&to=2026-05-04&format=csv')).text()).trim().split('\n');
    expect(csv.slice(1).map((line) => line.split(',')[0])).toEqual(['d', 'x']);
    const r = await compact('hotspots', '--from', '2026-05-03', '--to', '2026-05-04');
    expect(r.stdout).toMatch(/removed 1 files an interrupted compaction had replaced/);
    expect(await allFiles(p('hotspots/date=2026-05-03'))).toEqual([expect.stringMatching(/^compacted-/)]);
  }, 120_000);

  it('still reads a different file dropped later under a replaced file name', async () => {
    const day = p('hotspots/date=2026-05-02');
    const compacted = (await allFiles(day))[0]!;
    await mkdir(day, { recursive: true });
    await writeParquet(path.join(day, '_a.parquet'), hotspots, [hotspot('new', '2026-05-02T11:00:00Z')]);
    await rename(path.join(day, '_a.parquet'), path.join(day, 'a.parquet'));
    const csv = (await (await server.get('/api/v1/hotspots?from=2026-05-02&to=2026-05-03&format=csv')).text()).trim().split('\n');
    expect(csv.slice(1).map((line) => line.split(',')[0])).toEqual(['c', 'a', 'b', 'new']);
    expect(await allFiles(day)).toEqual(['a.parquet', compacted]);
  }, 120_000);
});
